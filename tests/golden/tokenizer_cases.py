"""Test inputs for gen_tokenizer.py: a list of (category, bytes).

Hand-written by us for cachet (not taken from llama.cpp). Every entry is raw bytes so that
invalid UTF-8 can be represented.
"""


def _u(s):
    return s.encode("utf-8")


def cases(special_tokens):
    """special_tokens: list of the texts of all control/user_defined tokens of the vocab."""
    out = []

    def add(cat, items):
        for it in items:
            out.append((cat, it if isinstance(it, bytes) else _u(it)))

    # --- basics / edge cases -------------------------------------------------------------
    add("basic", [
        "", "a", "A", "Hello", "hello", "HELLO", "Hello world", " Hello world", "Hello world ",
        "Hello World!", " Hello World!", "Hello, world!", "hello, world", "Hello,world", "Hello\nworld",
        "Führer", "ied 4 ½ months", "' era", "abc", "x", "I", "the", " the", "The quick brown fox",
        "camelCaseIdentifier", "snake_case_identifier", "SCREAMING_SNAKE_CASE", "kebab-case-word",
        "PascalCase", "mIxEd CaSe TeXt", "a.b.c", "e.g.", "i.e.,", "Mr. Smith", "U.S.A.",
        "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
        "user@example.com", "/usr/local/bin/python3", "C:\\Windows\\System32\\drivers",
        "#hashtag @mention $dollar %percent ^caret &amp *star",
        "!!!???...", "----------", "==========", "**bold** _italic_ `code`", "<<>>[[]]{{}}(())",
        "a" * 100, "ab" * 50, "333333333", "Hellooooooooooooooooooo",
    ])

    # --- ASCII prose ----------------------------------------------------------------------
    add("prose", [
        "The capital of France is Paris.",
        "What is the capital of France?",
        "Once upon a time, in a land far, far away, there lived a small dragon who loved to read books.",
        "Machine learning is a field of study in artificial intelligence concerned with the development of "
        "statistical algorithms that can learn from data and generalize to unseen data.",
        "She sells sea shells by the sea shore.",
        "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness.",
        "To be, or not to be: that is the question.",
        "The mitochondria is the powerhouse of the cell.",
        "Please summarize the following article in three sentences.",
        "Q: How many legs does a spider have?\nA: Eight.",
        "Dear Sir or Madam,\n\nI am writing to inform you that your order has shipped.\n\nBest regards,\nAlice",
        "Note: this is NOT a drill. Repeat: NOT a drill!",
        "In 1969, Apollo 11 landed on the Moon; Neil Armstrong was the first person to walk on it.",
        "\"Quoted text,\" she said, \"is tricky.\"",
        "(parenthetical remark) [bracketed remark] {braced remark}",
        "semi;colon:colon,comma.period!bang?question",
        "First line.\nSecond line.\r\nThird line.\rFourth line.",
        "Tabs\tbetween\twords\tare\there.",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore "
        "et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut "
        "aliquip ex ea commodo consequat.",
        "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z",
        "a b c d e f g h i j k l m n o p q r s t u v w x y z",
        "The end.",
    ])

    # --- code -----------------------------------------------------------------------------
    add("code_c", [
        "#include <stdio.h>\n\nint main(void) {\n    printf(\"Hello, world!\\n\");\n    return 0;\n}\n",
        "static inline float silu(float x) { return x / (1.0f + expf(-x)); }",
        "for (int i = 0; i < n; ++i) {\n\ty[i] += a * x[i];\n}",
        "typedef struct { uint16_t d; uint8_t qs[16]; } block_q4_0;",
        "if (p == NULL) { fprintf(stderr, \"oom\\n\"); exit(1); }",
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))",
        "x <<= 2; y >>= 3; z &= ~0xFF; w |= 1u << 31; v ^= v;",
        "/* block comment */ // line comment",
    ])
    add("code_python", [
        "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
        "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)\nprint(x.shape)",
        "class Foo(Base):\n    \"\"\"Docstring.\"\"\"\n\n    def __init__(self, *args, **kwargs):\n        super().__init__()\n",
        "result = [x ** 2 for x in range(10) if x % 2 == 0]",
        "with open('file.txt', 'r', encoding='utf-8') as f:\n\tdata = f.read()",
        "lambda x: x if x else None",
        "print(f\"{name!r:>10} = {value:.3f}\")",
        "@decorator\nasync def handler(request) -> dict:\n    await asyncio.sleep(0.1)\n    return {}",
    ])
    add("code_js", [
        "const add = (a, b) => a + b;\nconsole.log(add(1, 2));",
        "function greet(name) {\n  return `Hello, ${name}!`;\n}",
        "let x = null ?? undefined ?? 0; x ||= 5; x &&= 3;",
        "document.querySelector('#app').addEventListener('click', (e) => { e.preventDefault(); });",
        "export default { data() { return { count: 0 } } }",
        "if (a === b && c !== d) { /* strict */ }",
    ])
    add("code_rust", [
        "fn main() {\n    let v: Vec<i32> = (0..10).collect();\n    println!(\"{:?}\", v);\n}",
        "impl<T: Clone> Stack<T> {\n    pub fn push(&mut self, item: T) { self.items.push(item); }\n}",
        "match x { Some(ref y) if *y > 0 => y, _ => &0 }",
        "#[derive(Debug, Clone, PartialEq)]\nstruct Point { x: f64, y: f64 }",
        "let s: &'static str = \"lifetime\";",
    ])
    add("code_shell", [
        "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n  echo \"$f\"\ndone",
        "cat file.txt | grep -i 'error' | sort | uniq -c | sort -rn | head -n 10",
        "export PATH=\"$HOME/.local/bin:$PATH\" && cd ~/src && make -j2",
        "if [ -z \"${VAR:-}\" ]; then echo 'unset' >&2; exit 1; fi",
        "find . -name '*.c' -exec wc -l {} + | tail -1",
    ])
    add("code_json", [
        "{\"name\": \"cachet\", \"version\": \"0.1.0\", \"tags\": [\"llm\", \"c\"], \"ok\": true, \"n\": null}",
        "{\n  \"key\": \"value\",\n  \"nested\": {\n    \"array\": [1, 2, 3.5, -4e10]\n  }\n}",
        "[{\"id\":1},{\"id\":2},{\"id\":3}]",
        "{\"emoji\": \"\\ud83d\\ude00\", \"escaped\": \"line\\nbreak\\ttab\\\\slash\"}",
    ])
    add("code_html", [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Test</title></head>\n"
        "<body>\n  <p class=\"intro\">Hello &amp; welcome!</p>\n</body>\n</html>",
        "<div id=\"main\"><a href=\"https://example.com/?q=1&amp;r=2\">link</a></div>",
        "<script>alert('x');</script><style>body { margin: 0; }</style>",
        "<code>int x = 0;</code>",
    ])
    add("code_other", [
        "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC LIMIT 10;",
        "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}",
        "key: value\nlist:\n  - one\n  - two\nnested:\n  a: 1",
        "# Title\n\n## Subtitle\n\n- item 1\n- item 2\n\n```c\nint x;\n```\n",
        "\\begin{equation} E = mc^2 \\end{equation}",
        "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n-old\n+new",
        "0x1F 0b1010 0o777 1e-5 1E+10 .5 5. 1_000_000",
    ])

    # --- whitespace -----------------------------------------------------------------------
    ws = []
    for n in range(1, 9):
        ws.append(" " * n)
    for n in range(1, 5):
        ws.append("\t" * n)
        ws.append("\n" * n)
    ws += [
        "\t\n", "\n\t", " \n", "\n ", " \t ", "\r\n", "\r\n\r\n", "\r", "\n\r",
        "  Hello", "   Hello", "    Hello\n    Hello", " Hello", "Hello  ", "Hello   ", "Hello \n",
        "x\n\n\ny", "a  b", "a   b", "a    b", "a\tb", "a\t\tb", "a \tb", "a\t b",
        "\n =", "\n\nHello", "Hello\n\n", "\tindented", "\t\tdouble indented", " \t \t mixed",
        "line1\n  line2\n    line3\n", "trailing spaces   \nnext", "\x0b\x0c", "a\x0bb\x0cc",
        "a\u00a0b", "\u00a0\u00a0", "a\u3000b", "a\u2028b\u2029c", "a\u2003b\u2009c\u200ad",
        "a\u0085b", "a\u1680b", "a\u202fb\u205fc", "a\u200bb", "a\x1c\x1d\x1e\x1fb",
        " " * 20 + "x", "x" + " " * 20, "\n" * 10, " \n" * 5, "\t" * 8 + "x",
    ]
    add("whitespace", ws)

    # --- numbers --------------------------------------------------------------------------
    add("numbers", [
        "0", "1", "12", "123", "1234", "12345", "123456789", "3.14", "3.14159265358979",
        "1,000,000", "1.000.000,50", "-42", "+7", "1e10", "2^10 = 1024", "100%", "$19.99",
        "a 12", "a  1", "abc123def", "x1y2z3", "v1.2.3", "2024-01-15", "12:34:56",
        "½", "¼ ¾", "²", "x² + y³", "H₂O", "①②③", "Ⅻ", "٠١٢٣٤٥٦٧٨٩", "۱۲۳", "१२३", "๑๒๓",
        "一二三", "１２３", "3½ cups", "10⁻³", "π ≈ 3.14159", "∞",
    ])

    # --- Unicode scripts ------------------------------------------------------------------
    add("unicode", [
        "你好，世界！", "我爱自然语言处理。", "日本語のテキストです。", "ひらがな カタカナ", "ｶﾀｶﾅ",
        "안녕하세요, 세계!", "한국어 텍스트", "Привет, мир!", "Съешь же ещё этих мягких французских булок.",
        "Γειά σου Κόσμε!", "Ελληνικά: αβγδεζηθ", "مرحبا بالعالم", "اللغة العربية جميلة",
        "שלום עולם", "עברית", "नमस्ते दुनिया", "हिन्दी भाषा", "สวัสดีชาวโลก", "ภาษาไทย",
        "Tiếng Việt có dấu", "Ærøskøbing Ålborg", "Straße café naïve résumé", "Ça va? Où êtes-vous?",
        "ÀÉÎÕÜ àéîõü", "Ñandú", "İstanbul ıi", "ǅ ǈ ǋ", "ﬁ ﬂ", "ŉ", "ẞ ß",
        "Ⓐⓑ", "𝐀𝐁𝐂 𝑥𝑦𝑧", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ᚠᛇᚻ", "ሰላም", "Ꭰ Ꭱ", "ꦲꦏ꧀ꦱꦫ",
        "mixed English 和中文 and русский", "\ufeffBOM at start", "\ufffd replacement char",
        "\U0010ffff", "\ue000 private use", "\u0000 NUL inside",
    ])

    # --- emoji ----------------------------------------------------------------------------
    add("emoji", [
        "😀", "😀😃😄", "Hello 👋 world 🌍!", "👍🏽", "👨‍👩‍👧‍👦", "👩🏾‍💻", "🏳️‍🌈", "🏴‍☠️",
        "🇫🇷", "🇺🇸🇬🇧🇯🇵", "❤️", "❤", "☕", "✅ done ❌ failed", "🤖🧠💡", "1️⃣ 2️⃣ #️⃣",
        "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "a😀b", " 😀 ", "😀\n😀",
    ])

    # --- combining marks ------------------------------------------------------------------
    add("combining", [
        "e\u0301", "cafe\u0301", "a\u0308o\u0308u\u0308", "n\u0303", "Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o",
        "\u0301 leading combining", "x\u20d7", "\u0915\u094d\u0937", "ก\u0e34\u0e48", "\u05e9\u05c1\u05b8",
        "a\u0300\u0301\u0302\u0303\u0304",
    ])

    # --- contractions ---------------------------------------------------------------------
    add("contractions", [
        "it's", "It's", "IT'S", "it'S", "don't", "DON'T", "Don'T", "we're", "WE'RE", "We'Re",
        "I've", "I'VE", "I'm", "I'M", "you'll", "YOU'LL", "he'd", "HE'D",
        "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'x", "''", "'", " 's", "s'",
        "the dog's bone", "the dogs' bones", "rock 'n' roll", "'quoted'", "it’s (curly)",
        "I'd've", "y'all'd've", "'sss", "'lll", "'ref",
    ])

    # --- special tokens -------------------------------------------------------------------
    sp = []
    for t in special_tokens:
        sp.append(t)
    for t in special_tokens:
        sp.append("Hello" + t + "world")
        sp.append(" " + t + " ")
    sp += [
        "".join(special_tokens[:3]),
        special_tokens[1] + special_tokens[2],
        special_tokens[1] + special_tokens[1],
        "<|im_start|>user\nHi<|im_end|>\n",
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>assistant\nThe capital of France is Paris.<|im_end|>\n<|endoftext|>",
        "<|im_start", "<|im_start|", "im_start|>", "<|im_end|", "<| im_end |>", "<|IM_END|>",
        "<<|im_end|>>", "<|<|im_start|>|>", "<|im_start|><|im_start|>", "x<|endoftext|>y",
        "<|endoftext|><|endoftext|>", "<|endoftext|>\n\n<|endoftext|>",
        "<filename>src/main.c<file_sep>int x;", "<jupyter_code>print(1)<jupyter_output>1",
        "<reponame>cachet<gh_stars>100", "<|im_start|> ", " <|im_start|>", "\n<|im_end|>\n",
        "<s>", "</s>", "<unk>", "<pad>", "[INST]", "<|eot_id|>",
    ]
    add("special", sp)

    # --- invalid UTF-8 --------------------------------------------------------------------
    add("invalid_utf8", [
        b"\x80", b"\xbf", b"\x80\x80\x80", b"a\x80b", b"\xff", b"\xfe", b"\xff\xfe", b"a\xffb",
        b"\xc3", b"a\xc3", b"\xc3a", b"\xe2\x82", b"\xe2\x82a", b"\xf0\x9f\x98", b"\xf0\x9f\x98 x",
        b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
        b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80",
        b"Hello \xff world", b"caf\xe9", b"\xe9t\xe9", b"\xc3\xa9\xc3", b"\xa9\xc3\xa9",
        b"\x80<|im_start|>\x80", b"<|im_end|>\xff", b"\xf0\x9f\x98\x80\xf0\x9f\x98",
        b"\xe4\xbd\xa0\xe5\xa5", b"\xce\xb1\xce", b" \x80 \x81 \x82", b"12\xff34", b"it\x92s",
    ])

    # --- all single ASCII bytes (including controls and NUL) -------------------------------
    add("ascii_byte", [bytes([b]) for b in range(0x00, 0x80)])

    # --- a few single valid 2/3/4-byte characters at boundaries ---------------------------
    add("boundary", [
        "\u0080", "\u00ff", "\u0100", "\u07ff", "\u0800", "\ud7ff",
        "\ue000", "\uffff", "\U00010000", "\U0001f600", "\U000e0001",
        # SmolLM2's vocab has no byte token for 0x04 0x06 0x13 0x14 0x16 0x1D 0xC0 0xC1 0xF1 0xF2 0xF5-0xFF:
        "\U00040000", "\U00080000", "x\U00050000y", "a\x04b", "a\x06\x13\x14\x16b", "\x1d\x1d",
    ])

    # --- long -----------------------------------------------------------------------------
    long_text = (
        "The history of computing is longer than the history of computing hardware and modern computing "
        "technology and includes the history of methods intended for pen and paper or for chalk and slate, "
        "with or without the aid of tables. " * 5
    )
    add("long", [long_text, "x = 1\n" * 40, "🙂" * 30, "\u3042" * 50, "word " * 60])
    return out
