#!/usr/bin/env python3
"""tests/golden/gen_chat.py: golden renderings of real chat templates.

Renders a fixed set of conversations (system + user, multi-turn, tool
definitions, assistant tool calls, tool results, with and without the
generation prompt) through each model family's real Jinja template with
jinja2, in the environment Hugging Face transformers renders chat templates
in (sandboxed, trim_blocks + lstrip_blocks, loopcontrols, its tojson,
raise_exception, strftime_now). engine/chat.c must give the same bytes;
tests/test_chat_golden.c checks it against the committed output. The
templates are never committed: they come from the llama-cpp-python sdist.

usage:
  gen_chat.py extract SDIST_ROOT OUT_DIR [SMOLLM2.gguf]   write the templates as OUT_DIR/NAME.jinja
  gen_chat.py generate TEMPLATE_DIR OUT.json             render them (tests/golden/chat/renderings.json)
"""
import datetime
import hashlib
import json
import os
import re
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

# cachet's fixed date for templates that print one (Llama 3.1's "Today Date"):
# the prompt must not change from one day to the next. It is the default Llama
# 3.1's own template falls back to. engine/chat.c uses the same value.
FIXED_DATE_STRING = "26 Jul 2024"
FIXED_NOW = datetime.datetime(2024, 7, 26, 12, 0, 0)

LLAMA3_BOS, LLAMA3_EOS = "<|begin_of_text|>", "<|eot_id|>"
DS_BOS, DS_EOS = "<\uff5cbegin\u2581of\u2581sentence\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"

# name -> (where it comes from, the variant engine/chat.c must recognise, bos, eos)
TEMPLATES = [
    ("SmolLM2-135M-Instruct", "gguf:tokenizer.chat_template", "chatml", "<|im_start|>", "<|im_end|>"),
    ("OpenHermes-2.5-Mistral-7B", "cpp:teknium/OpenHermes-2.5-Mistral-7B", "chatml", "<s>", "<|im_end|>"),
    ("Qwen-Qwen2.5-7B-Instruct", "file:Qwen-Qwen2.5-7B-Instruct.jinja", "qwen2.5", "", "<|im_end|>"),
    ("Qwen-Qwen3-0.6B", "file:Qwen-Qwen3-0.6B.jinja", "qwen3", "", "<|im_end|>"),
    ("Meta-Llama-3-8B-Instruct", "py:LLAMA3_INSTRUCT_CHAT_TEMPLATE", "llama3", LLAMA3_BOS, LLAMA3_EOS),
    ("meta-llama-Llama-3.1-8B-Instruct", "file:meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3.1",
     LLAMA3_BOS, LLAMA3_EOS),
    ("meta-llama-Llama-3.2-3B-Instruct", "file:meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3.1",
     LLAMA3_BOS, LLAMA3_EOS),
    ("meta-llama-Llama-3.3-70B-Instruct", "file:meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3.1",
     LLAMA3_BOS, LLAMA3_EOS),
    ("Mistral-7B-Instruct-v0.1", "cpp:mistralai/Mistral-7B-Instruct-v0.2 (NOTE: Old pre-v1 without a system prompt)",
     "mistral-v0", "<s>", "</s>"),
    ("Mistral-7B-Instruct-v0.2", "cpp:mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)",
     "mistral-v1", "<s>", "</s>"),
    ("Mistral-Large-Instruct-2407", "cpp:Mistral-Large-Instruct-2407 (mistralai 'v3' template; modified to have system prompt at start)",
     "mistral-v3", "<s>", "</s>"),
    ("mistralai-Mistral-Nemo-Instruct-2407", "file:mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-v3-tekken",
     "<s>", "</s>"),
    ("Phi-3-mini-4k-instruct", "cpp:Phi-3-mini", "phi3-mini", "<s>", "<|endoftext|>"),
    ("Phi-3-small-8k-instruct", "cpp:Phi-3-small", "phi3-small", "<|endoftext|>", "<|endoftext|>"),
    ("Phi-3-medium-4k-instruct", "cpp:Phi-3-medium", "phi3-mini", "<s>", "<|endoftext|>"),
    ("Phi-3-vision-128k-instruct", "cpp:Phi-3-vision", "phi3-vision", "<s>", "<|endoftext|>"),
    ("microsoft-Phi-3.5-mini-instruct", "file:microsoft-Phi-3.5-mini-instruct.jinja", "phi3", "<s>", "<|endoftext|>"),
    ("phi-4", "cpp:phi-4", "phi4", "<|endoftext|>", "<|im_end|>"),
    ("google-gemma-2-2b-it", "file:google-gemma-2-2b-it.jinja", "gemma2", "<bos>", "<eos>"),
    ("google-gemma-7b-it", "cpp:google/gemma-7b-it", "gemma2", "<bos>", "<eos>"),
    ("DeepSeek-V2", "cpp:DeepSeek-V2", "deepseek-v2", DS_BOS, DS_EOS),
    ("deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "file:deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "deepseek-r1",
     DS_BOS, DS_EOS),
    ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "file:deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-r1",
     DS_BOS, DS_EOS),
    ("deepseek-ai-DeepSeek-V3.1", "file:deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v3.1", DS_BOS, DS_EOS),
]

# The strings engine/chat.c looks for in a template to pick its family (keep
# in step with detect_family and eng_chat_new there). Each template's entry
# lists those it contains: the test builds a stand-in template of them, so the
# detection is checked on the real templates' features without committing them.
PROBES = ["<|im_start|>", "<|im_sep|>", "</think>", "<start_of_turn>", "<|start_header_id|>", "Today Date",
          "[INST]", "\"[INST]\" +", "'[INST]' +", "' [INST] '", "\" [INST] \"", "' [/INST]'", "\" [/INST]\"",
          "<|user|>", "'<|' + message['role'] + '|>'", "<|system|>", "eos_token", "bos_token",
          "<|end|>", "<tool_response>", "<think></think>", "<\uff5cUser\uff5c>", "<\uff5cAssistant\uff5c><think>\\n", "enable_thinking"]

# --- the conversations ---------------------------------------------------------

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file",
        "description": "Read a text file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "relative path"},
                                                         "offset": {"type": "integer"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "grep",
        "description": "Search files for a regular expression; prints file:line: text.",
        "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}},
                       "required": ["pattern"]}}},
]

SYS = "You are a helpful assistant."
CALL1 = {"id": "call00001", "type": "function",
         "function": {"name": "read_file", "arguments": {"path": "README.md"}}}
# OpenAI's convention: arguments as a JSON string (templates differ in what they take)
CALL1_S = {"id": "call00001", "type": "function",
           "function": {"name": "read_file", "arguments": "{\"path\": \"README.md\"}"}}
CALL2 = {"id": "call00002", "type": "function",
         "function": {"name": "grep", "arguments": {"pattern": "TODO"}}}
CALL_U = {"id": "call00003", "type": "function",
          "function": {"name": "grep", "arguments": {
              "pattern": "a\"b\\c\n<\u00e9> & 'q' \t\u2028", "count": 3, "ratio": 0.5, "big": 1e+20,
              "flag": True, "none": None, "list": [1, "x", [], {}], "nested": {"k": {"z": -2}}}}}


def tool_msg(call, content):
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


CONVERSATIONS = {
    "system_user": {"messages": [{"role": "system", "content": SYS}, {"role": "user", "content": "Hello!"}]},
    "user_only": {"messages": [{"role": "user", "content": "Hello!"}]},
    "multi_turn": {"messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": " Hi there\n"},
        {"role": "assistant", "content": "  Hello! How can I help? "},
        {"role": "user", "content": "What is 2+2?"}]},
    "multi_turn_nosys": {"messages": [
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "Thanks."}]},
    "unicode": {"messages": [
        {"role": "system", "content": "R\u00e9ponds en fran\u00e7ais \u2014 \"vite\"."},
        {"role": "user", "content": "\u00dcn\u00efc\u00f6d\u00e9 <tag> & 'quotes' \\ back\ttab \U0001f389"},
        {"role": "assistant", "content": "\u00e7a va\u3000"},
        {"role": "user", "content": "\u3000encore\u00a0"}]},
    "tools": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "What is in README.md?"}]},
    "tools_nosys": {"tools": True, "messages": [{"role": "user", "content": "What is in README.md?"}]},
    "tool_call": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "What is in README.md?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL1]},
        tool_msg(CALL1, "{\"name\": \"read_file\", \"result\": \"# cachet\\nA terminal agent.\"}")]},
    "tool_call_empty": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "What is in README.md?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL1]},
        tool_msg(CALL1, "# cachet\nA terminal agent.")]},
    "tool_calls_two": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "Read README.md and find TODOs."},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL1, CALL2]},
        tool_msg(CALL1, "# cachet"),
        tool_msg(CALL2, "src/a.c:3: TODO"),
        {"role": "assistant", "content": "README.md is a title; one TODO in src/a.c."},
        {"role": "user", "content": "Thanks."}]},
    "tool_call_unicode": {"tools": True, "messages": [
        {"role": "user", "content": "Search."},
        {"role": "assistant", "content": "", "tool_calls": [CALL_U]},
        tool_msg(CALL_U, "no match: \u00e9 \"x\"")]},
    "tool_call_strargs": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "What is in README.md?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL1_S]},
        tool_msg(CALL1_S, "# cachet")]},
    "tool_call_last": {"tools": True, "messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "What is in README.md?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL1]}]},
    "thinking": {"messages": [
        {"role": "system", "content": SYS},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n4"},
        {"role": "user", "content": "3+3?"}]},
}

# (conversation, add_generation_prompt, extra template variables); every run
# also sets date_string (FIXED_DATE_STRING) and the bos/eos token texts
RUNS = [(name, True, {}) for name in CONVERSATIONS] + [
    ("multi_turn", False, {}),
    ("multi_turn_nosys", False, {}),
    ("tool_calls_two", False, {}),
    ("tools", True, {"tools_in_user_message": False}),
    ("tool_call", True, {"tools_in_user_message": False}),
    ("tool_calls_two", True, {"tools_in_user_message": False}),
    ("system_user", True, {"enable_thinking": False}),
    ("thinking", True, {"enable_thinking": False}),
    ("thinking", True, {"enable_thinking": True}),
]


# --- the renderer: transformers' chat-template environment -----------------------

class TemplateError(Exception):
    pass


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers overrides jinja2's tojson (which escapes HTML and sorts keys)
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return FIXED_NOW.strftime(fmt)


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, text, conv, gen, extra, bos, eos):
    tpl = env.from_string(text)
    kw = {"messages": conv["messages"], "tools": TOOLS if conv.get("tools") else None,
          "add_generation_prompt": gen, "bos_token": bos, "eos_token": eos, "date_string": FIXED_DATE_STRING}
    kw.update(extra)
    return tpl.render(**kw)


# --- reading the templates ----------------------------------------------------------

def cpp_templates(path):
    """name -> template_str of the test cases in llama.cpp's test-chat-template.cpp"""
    src = open(path, encoding="utf-8").read()
    out = {}
    lit = r'(?:U8C\()?((?:"(?:[^"\\]|\\.)*"\s*)+)\)?'
    for m in re.finditer(r'/\* \.name= \*/\s*"((?:[^"\\]|\\.)*)",\s*/\* \.template_str= \*/\s*' + lit, src):
        name = bytes(m.group(1), "utf-8").decode("unicode_escape")
        parts = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
        out[name] = "".join(bytes(p, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
                            for p in parts)
    return out


def py_templates(path):
    src = open(path, encoding="utf-8").read()
    out = {}
    for m in re.finditer(r'^([A-Z0-9_]+_CHAT_TEMPLATE) = (".*")$', src, re.M):
        out[m.group(1)] = eval(m.group(2))  # a plain string literal
    return out


def gguf_template(path):
    import gguf
    r = gguf.GGUFReader(path)
    f = r.fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def extract(sdist, out_dir, smollm2=None):
    os.makedirs(out_dir, exist_ok=True)
    cpp = cpp_templates(os.path.join(sdist, "vendor/llama.cpp/tests/test-chat-template.cpp"))
    py = py_templates(os.path.join(sdist, "llama_cpp/llama_chat_format.py"))
    for name, src, *_ in TEMPLATES:
        kind, key = src.split(":", 1)
        if kind == "file":
            text = open(os.path.join(sdist, "vendor/llama.cpp/models/templates", key), encoding="utf-8").read()
        elif kind == "cpp":
            text = cpp[key]
        elif kind == "py":
            text = py[key]
        elif smollm2:
            text = gguf_template(smollm2)
        else:
            continue
        with open(os.path.join(out_dir, name + ".jinja"), "w", encoding="utf-8") as f:
            f.write(text)


def generate(tdir, out_path):
    env = make_env()
    doc = {"generator": "tests/golden/gen_chat.py", "jinja2": jinja2.__version__,
           "source": "llama_cpp_python-0.3.36 sdist (vendor/llama.cpp/models/templates, "
                     "vendor/llama.cpp/tests/test-chat-template.cpp, llama_cpp/llama_chat_format.py) "
                     "and the SmolLM2 GGUF",
           "date_string": FIXED_DATE_STRING, "tools": TOOLS, "conversations": CONVERSATIONS, "templates": []}
    n = 0
    for name, src, variant, bos, eos in TEMPLATES:
        path = os.path.join(tdir, name + ".jinja")
        text = open(path, encoding="utf-8").read()
        entry = {"name": name, "source": src, "variant": variant, "bos": bos, "eos": eos,
                 "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                 "probes": [p for p in PROBES if p in text], "cases": []}
        for conv, gen, extra in RUNS:
            case = {"conversation": conv, "add_generation_prompt": gen}
            case.update(extra)
            try:
                case["output"] = render(env, text, CONVERSATIONS[conv], gen, extra, bos, eos)
            except (TemplateError, TypeError, jinja2.exceptions.UndefinedError) as e:
                case["error"] = "%s: %s" % (type(e).__name__, e)
            entry["cases"].append(case)
            n += 1
        doc["templates"].append(entry)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%s: %d templates, %d renderings" % (out_path, len(TEMPLATES), n))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "extract":
        extract(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    elif len(sys.argv) == 4 and sys.argv[1] == "generate":
        generate(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
