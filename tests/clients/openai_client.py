#!/usr/bin/env python3
"""tests/clients/openai_client.py: the official `openai` package (and
prometheus_client's parser) against a running `cachet serve`, for
tests/test_clients.c. Usage: openai_client.py BASE_URL (http://127.0.0.1:PORT).

Every reply is read by the client itself (its SSE reader, its error classes)
and validated against the package's own pydantic types from the raw bytes, so a
field of the wrong type or a malformed event fails here. Prints one line per
check ("ok NAME" or "FAIL NAME: why") and exits 1 if any failed. Not a test of
the model's text: greedy outputs are only compared with each other."""
import json
import sys
import urllib.request

import openai
from openai.types import Completion, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk

failures = 0


def check(name, ok, why=""):
    global failures
    if ok:
        print("ok " + name)
    else:
        failures += 1
        print("FAIL %s: %s" % (name, why))


def main():
    base = sys.argv[1].rstrip("/")
    # any model name: cachet serves one model and answers with its own id
    client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0, timeout=120)

    models = client.models.list()
    ids = [m.id for m in models.data]
    check("models.list", len(ids) == 1, "ids %r" % ids)
    for m in models.data:
        Model.model_validate(m.model_dump())
    served = ids[0] if ids else ""

    messages = [
        {"role": "system", "content": "You are a terse assistant. Answer in one short sentence."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=messages, max_tokens=12, temperature=0)
    text = raw.http_response.text
    cc = ChatCompletion.model_validate_json(text)  # the package's schema, from the raw bytes
    parsed = raw.parse()
    check("chat.validate", cc.object == "chat.completion" and len(cc.choices) == 1, text[:200])
    check("chat.model_id", cc.model == served, "model %r, served %r" % (cc.model, served))
    content = cc.choices[0].message.content or ""
    check("chat.content", isinstance(content, str) and content == (parsed.choices[0].message.content or ""),
          "content %r" % content)
    check("chat.finish_reason", cc.choices[0].finish_reason in ("stop", "length"), str(cc.choices[0].finish_reason))
    u = cc.usage
    check("chat.usage", u is not None and u.total_tokens == u.prompt_tokens + u.completion_tokens
          and 0 < u.completion_tokens <= 12, repr(u))
    cached = [u.prompt_tokens_details.cached_tokens if u and u.prompt_tokens_details else None]

    # the same request again: the whole prompt but its last token comes from the cache
    again = client.chat.completions.create(model="anything-else", messages=messages, max_tokens=12, temperature=0)
    u2 = again.usage
    c2 = u2.prompt_tokens_details.cached_tokens if u2 and u2.prompt_tokens_details else None
    cached.append(c2)
    check("chat.cached_tokens", c2 is not None and c2 > 0 and c2 < u2.prompt_tokens,
          "cached %r of %r" % (c2, u2.prompt_tokens if u2 else None))
    check("chat.greedy_repeat", (again.choices[0].message.content or "") == content,
          "%r vs %r" % (again.choices[0].message.content, content))

    # streaming through the client's own SSE reader, with the usage event
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=12, temperature=0,
                                            stream=True, stream_options={"include_usage": True})
    pieces, finish, usage, n_events = [], None, None, 0
    for chunk in stream:
        n_events += 1
        ChatCompletionChunk.model_validate(chunk.model_dump())
        if chunk.usage is not None:
            usage = chunk.usage
        for ch in chunk.choices:
            if ch.delta and ch.delta.content:
                pieces.append(ch.delta.content)
            if ch.finish_reason:
                finish = ch.finish_reason
    check("stream.text", "".join(pieces) == content, "%r vs %r" % ("".join(pieces), content))
    check("stream.finish", finish in ("stop", "length") and n_events >= 3, "finish %r, %d events" % (finish, n_events))
    check("stream.usage", usage is not None and usage.completion_tokens == u.completion_tokens, repr(usage))
    if usage is not None and usage.prompt_tokens_details:
        cached.append(usage.prompt_tokens_details.cached_tokens)

    # the legacy completions route
    rawc = client.completions.with_raw_response.create(model="x", prompt="The capital of France is",
                                                       max_tokens=5, temperature=0)
    comp = Completion.model_validate_json(rawc.http_response.text)
    check("completions", comp.object == "text_completion" and isinstance(comp.choices[0].text, str)
          and comp.usage is not None and comp.usage.completion_tokens > 0, rawc.http_response.text[:200])
    if comp.usage is not None and comp.usage.prompt_tokens_details:
        cached.append(comp.usage.prompt_tokens_details.cached_tokens)

    # errors come back as the client's exception classes with OpenAI's error body
    try:
        client.chat.completions.create(model="m", messages=messages, max_tokens=-3)
        check("error.bad_request", False, "max_tokens -3 was accepted")
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check("error.bad_request", e.status_code == 400 and "max_tokens" in json.dumps(body),
              "status %s body %r" % (e.status_code, e.body))
    try:
        client.chat.completions.create(model="m", messages=[], max_tokens=3)
        check("error.empty_messages", False, "accepted")
    except openai.BadRequestError as e:
        check("error.empty_messages", e.status_code == 400, str(e))
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi " * 3000}], max_tokens=3)
        check("error.context", False, "a prompt over the context was accepted")
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check("error.context", e.status_code == 400 and body.get("code") == "context_length_exceeded",
              "status %s body %r" % (e.status_code, e.body))

    # /metrics through prometheus_client's parser: every family parses, the
    # hit counter equals the sum of usage.cached_tokens this client saw
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("skip metrics: prometheus_client is not installed")
    else:
        with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
            text = r.read().decode("utf-8")
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        check("metrics.families", len(fams) >= 10, "%d families" % len(fams))

        def value(name, suffix="_total"):
            f = fams.get(name)
            if f is None:
                return None
            for s in f.samples:
                if s.name == name + suffix or (suffix == "" and s.name == name):
                    return s.value
            return None

        hits = value("cachet_prefix_cache_hits")
        check("metrics.hits_equal_usage", hits is not None and all(c is not None for c in cached)
              and int(hits) == sum(cached), "hits %r, usage %r" % (hits, cached))
        ttft = fams.get("cachet_time_to_first_token_seconds")
        check("metrics.histogram", ttft is not None and ttft.type == "histogram"
              and any(s.name.endswith("_bucket") and s.labels.get("le") == "+Inf" for s in ttft.samples),
              "ttft family %r" % (ttft.type if ttft else None))
        codes = fams.get("cachet_requests")
        check("metrics.requests_by_code", codes is not None and any(s.labels.get("code") == "400"
                                                                    for s in codes.samples), "no code=400 sample")
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
