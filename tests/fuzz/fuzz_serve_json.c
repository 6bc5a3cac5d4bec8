/* tests/fuzz/fuzz_serve_json.c: libFuzzer target for `cachet serve`'s request
 * bodies (serve/serve_json.c): the first byte picks chat or completions, the
 * rest is the body; a chat request that parses is rendered through the ChatML
 * template as the server would (its text, not its tokens: no model here), and
 * an error becomes its JSON body. Seeds: tests/fuzz/corpus/serve_json. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../serve/serve_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static eng_chat *chat; /* ChatML without a template: built once */
    if (!chat && eng_chat_new(&chat, NULL, NULL) != 0) abort();
    if (size < 1) return 0;
    serve_kind kind = data[0] & 1 ? SERVE_COMPLETION : SERVE_CHAT;
    eng_sample_params sp = eng_sample_defaults();
    serve_request r;
    serve_error e = {0};
    if (serve_request_parse(&r, kind, (const char *)data + 1, size - 1, &sp, &e) != 0) {
        free(serve_error_json(&e));
        return 0;
    }
    if (kind == SERVE_CHAT) {
        util_buf b;
        util_buf_init(&b);
        (void)eng_chat_render(chat, r.msgs, r.n_msgs, 1, &b, NULL);
        util_buf_release(&b);
    }
    serve_request_release(&r);
    return 0;
}
