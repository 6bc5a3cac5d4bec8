// tests/golden/vocabs/llama_vocab_ref.cpp: the reference side of the vocab
// goldens. Loads one vocab-only GGUF with llama.cpp (libllama, vocab_only) and,
// for each input line (lowercase hex of the raw bytes), prints one TAB-separated
// line: ids with parse_special on, ids with it off (add_special off both times),
// and the hex of llama_detokenize(ids_special) with unparse_special on and off.
// Built and run only by gen_vocabs.py; not part of cachet's build.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "llama.h"

static std::string unhex(const std::string & s) {
    std::string out;
    for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back((char) std::stoi(s.substr(i, 2), nullptr, 16));
    return out;
}

static std::string hex(const std::string & s) {
    static const char * d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) { out.push_back(d[c >> 4]); out.push_back(d[c & 15]); }
    return out;
}

static std::vector<llama_token> tok(const llama_vocab * v, const std::string & s, bool special) {
    std::vector<llama_token> ids(s.size() * 2 + 16);
    int n = llama_tokenize(v, s.data(), (int32_t) s.size(), ids.data(), (int32_t) ids.size(), false, special);
    if (n < 0) { ids.resize(-n); n = llama_tokenize(v, s.data(), (int32_t) s.size(), ids.data(), (int32_t) ids.size(), false, special); }
    ids.resize(n);
    return ids;
}

static std::string detok(const llama_vocab * v, const std::vector<llama_token> & ids, bool unparse) {
    std::string out(ids.size() * 64 + 64, '\0');
    int n = llama_detokenize(v, ids.data(), (int32_t) ids.size(), &out[0], (int32_t) out.size(), false, unparse);
    if (n < 0) { out.resize(-n); n = llama_detokenize(v, ids.data(), (int32_t) ids.size(), &out[0], (int32_t) out.size(), false, unparse); }
    out.resize(n);
    return out;
}

static std::string ids_str(const std::vector<llama_token> & ids) {
    std::string s;
    for (size_t i = 0; i < ids.size(); i++) { if (i) s += ' '; s += std::to_string(ids[i]); }
    return s;
}

int main(int argc, char ** argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s VOCAB.gguf < hex-lines\n", argv[0]); return 2; }
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * m = llama_model_load_from_file(argv[1], mp);
    if (!m) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * v = llama_model_get_vocab(m);
    for (std::string line; std::getline(std::cin, line);) {
        std::string s = unhex(line);
        auto sp = tok(v, s, true), pl = tok(v, s, false);
        printf("%s\t%s\t%s\t%s\n", ids_str(sp).c_str(), ids_str(pl).c_str(), hex(detok(v, sp, true)).c_str(),
               hex(detok(v, sp, false)).c_str());
        fflush(stdout);
    }
    llama_model_free(m);
    return 0;
}
