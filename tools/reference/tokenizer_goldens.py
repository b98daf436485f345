#!/usr/bin/env python3
"""Golden fixtures for io.zse.tokenizer, produced by the real Hugging Face `tokenizers` library.

Usage: python tokenizer_goldens.py <shared-dir> <output-dir>
  e.g. /tmp/v/bin/python tools/reference/tokenizer_goldens.py ../shared src/test/resources/golden/tokenizers

For each tokenizer it writes <name>.json with
  cases:   text -> ids (no special tokens), ids_with_special, decoded (of ids_with_special, keeping specials),
           decoded_skip (of ids_with_special, skipping specials)
  decodes: random id sequences -> decoded / decoded_skip (exercises byte fallback, broken UTF-8, added tokens)
The strings are deterministic (fixed seed) so reruns give identical files.
"""
import json
import random
import sys
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer

TOKENIZERS = {
    "tinystories": "models/tinystories-656k/tokenizer.json",
    "mistral-7b-v0.1": "tokenizers/mistral-7b-v0.1/tokenizer.json",
    "qwen3": "tokenizers/qwen3/tokenizer.json",
    "llama3": "tokenizers/llama3/tokenizer.json",
    "llama3_1": "tokenizers/llama3_1/tokenizer.json",
}

FIXED = [
    "", " ", "  ", "\n", "\n\n\n", "\t", " \t \n ", "a", " a", "a ", "  a  ", "Hello, world!", "hello world",
    "Hello  world", "Hello\u00a0world", "Hello\u3000world", "don't", "DON'T", "I'll we've they're she'd it's",
    "I'M YOU'RE", "\u017ftop 'ſ", "12345", "1234567890123", "3.14159", "1,000,000", "x=42;y=0x1F",
    "café", "cafe\u0301", "naïve résumé", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁ ﬂ ﬃ", "ǅ ǈ", "İstanbul",
    "你好，世界！", "日本語のテキスト", "한국어 텍스트", "Привет, мир!", "Γειά σου Κόσμε ΣΣ", "مرحبا بالعالم",
    "שלום עולם", "नमस्ते दुनिया", "ภาษาไทย", "Tiếng Việt có dấu",
    "😀", "👋🏽", "🇩🇪🇫🇷", "👨‍👩‍👧‍👦", "🤖 robots 🤖🤖", "a😀b", "\u2581", "\u2581\u2581x", "▁hello ▁",
    "<s>", "</s>", "<unk>", "<s>[INST] hi [/INST]", "x<s>y", " <s> ", "<s><s>",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "<|endoftext|>", "<think>\nhmm\n</think>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>", "<|eot_id|>x",
    "<|start_story|>Once upon a time", "Once <|start_story|> upon", "<|start_story|>",
    "def f(x):\n    return x * 2\n", "if (a && b) { return -1; }\n", "for i in range(10):\n\tprint(i)",
    "    indented\n        more\n", "a\n\nb\r\n\tc", "trailing spaces   ", "   leading spaces",
    "line1\r\nline2\rline3", "tabs\t\there", "multiple     spaces", "end.\n", "!!!???...", "#$%&*+-/<=>@^_`|~",
    "\"quoted\" 'single'", "http://example.com/a?b=c&d=e", "user@example.com", "C:\\path\\to\\file",
    "\x00", "\x01\x02\x7f", "\ufffd", "\ufeffBOM", "\u200b\u200czero width", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ȸ", "\U0010ffff",
    "Ω≈ç√∫˜µ≤≥÷", "½ ¾ ² ³ ①②", "Ⅻ ⅻ", "٣٤٥ ١٢", "𝟏𝟐𝟑",
    "The quick brown fox jumps over the lazy dog. " * 3,
]

LONG = (
    "Once upon a time, in a small village nestled between rolling hills, there lived a curious girl named Lily. "
    "Every morning she would wake up early, put on her red boots, and run down to the river to watch the fish. "
    "One day, she found a shiny stone that glowed blue in the sunlight! \"What could this be?\" she wondered.\n\n"
    "She showed it to her friend Tom, who said: 'I've never seen anything like it.' They decided to keep it secret, "
    "but by evening the whole village knew. 3 dogs, 12 cats and 1,024 chickens came to look at it. 🐔🐶🐱\n"
    "In 2024-03-15, at 09:45, the stone stopped glowing — forever. The end.\n"
)

WORDS = ["the", "The", "cat", "sat", "on", "mat", "don't", "we'll", "I'M", "naïve", "Straße", "你好", "世界",
         "日本", "語", "한국", "Привет", "мир", "😀", "🤖", "👍🏻", "🇯🇵", "x", "y_1", "foo.bar", "(a)", "[b]",
         "{c}", "42", "3.14", "100000", "-", "--", "...", "?!", "<s>", "</s>", "<|im_start|>", "<|im_end|>",
         "<|eot_id|>", "<|begin_of_text|>", "<|start_story|>", "<think>", "\u2581", "é", "e\u0301", "ﬁ",
         "\u00a0", "\t", "\n", "\r\n", "  ", "   ", "'s", "'S", "'t", "'re", "'ve", "'m", "'ll", "'d", "#", "@"]
SEPARATORS = [" ", "", "  ", "\n", " \n", "\t", "   ", "\n\n"]


def random_texts(rng, count):
    texts = []
    for _ in range(count):
        n = rng.randint(1, 14)
        parts = []
        for _ in range(n):
            parts.append(rng.choice(WORDS))
            parts.append(rng.choice(SEPARATORS))
        text = "".join(parts)
        if rng.random() < 0.3:
            text = rng.choice(SEPARATORS) + text
        if rng.random() < 0.5:
            text = text.rstrip() if rng.random() < 0.5 else text
        texts.append(text)
    return texts


def random_id_sequences(rng, tok, count):
    size = tok.get_vocab_size(with_added_tokens=True)
    added = sorted(tok.get_added_tokens_decoder().keys())
    byte_ids = [tok.token_to_id("<0x%02X>" % b) for b in range(256)]
    byte_ids = [i for i in byte_ids if i is not None]
    sequences = []
    for k in range(count):
        n = rng.randint(1, 24)
        seq = []
        for _ in range(n):
            r = rng.random()
            if r < 0.1 and added:
                seq.append(rng.choice(added))
            elif r < 0.35 and byte_ids:
                seq.append(rng.choice(byte_ids))
            elif r < 0.45:
                seq.append(rng.randrange(min(size, 1000)))
            else:
                seq.append(rng.randrange(size))
        sequences.append(seq)
    return sequences


def main():
    shared, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, rel in TOKENIZERS.items():
        path = shared / rel
        if not path.exists():
            print("skip", name, "(missing", path, ")")
            continue
        tok = Tokenizer.from_file(str(path))
        rng = random.Random(20261121 + len(name))
        texts = FIXED + [LONG, LONG * 4] + random_texts(rng, 220)
        cases = []
        for text in texts:
            ids = tok.encode(text, add_special_tokens=False).ids
            with_special = tok.encode(text, add_special_tokens=True).ids
            cases.append({
                "text": text,
                "ids": ids,
                "ids_with_special": with_special,
                "decoded": tok.decode(with_special, skip_special_tokens=False),
                "decoded_skip": tok.decode(with_special, skip_special_tokens=True),
            })
        decodes = []
        for seq in random_id_sequences(rng, tok, 150):
            decodes.append({
                "ids": seq,
                "decoded": tok.decode(seq, skip_special_tokens=False),
                "decoded_skip": tok.decode(seq, skip_special_tokens=True),
            })
        doc = {"tokenizer": rel, "oracle": "python tokenizers " + tokenizers.__version__,
               "cases": cases, "decodes": decodes}
        target = out / (name + ".json")
        target.write_text(json.dumps(doc, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n",
                          encoding="utf-8")
        print(name, len(cases), "cases,", len(decodes), "decodes,", target.stat().st_size, "bytes")
    write_variants(shared, out)


# Synthetic variants of the TinyStories tokenizer exercising components the real files above do not use.
# Each golden file embeds its tokenizer JSON (small: 2048-token vocabulary) next to the cases.
VARIANTS = {
    "variant-metaspace": {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Lowercase"}, {"type": "Strip", "strip_left": True, "strip_right": True}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
            {"type": "ByteFallback"}]},
        "post_processor": {"type": "RobertaProcessing", "sep": ["<|end_story|>", 2], "cls": ["<|start_story|>", 1],
                           "trim_offsets": True, "add_prefix_space": False},
        "added": [{"content": "[MASK]", "lstrip": True, "rstrip": False, "single_word": False, "special": True},
                  {"content": "wolf", "lstrip": False, "rstrip": True, "single_word": True, "special": False}],
    },
    "variant-whitespace": {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKD"}, {"type": "Replace", "pattern": {"Regex": "\\p{Mn}+"}, "content": ""},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
            {"type": "Prepend", "prepend": "\u2581"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"String": "\u2581"}, "behavior": "MergedWithNext", "invert": False},
            {"type": "Digits", "individual_digits": False},
            {"type": "Split", "pattern": {"Regex": "[.!?]"}, "behavior": "MergedWithPrevious", "invert": False}]},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 1}]},
        "post_processor": {"type": "BertProcessing", "sep": ["<|end_story|>", 2], "cls": ["<|start_story|>", 1]},
        "added": [{"content": "<sep>", "lstrip": True, "rstrip": True, "single_word": False, "special": True}],
    },
    "variant-whitespace-split": {
        "normalizer": {"type": "NFD"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Split", "pattern": {"Regex": "o+"}, "behavior": "Contiguous",
                                          "invert": True}]},
        "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
        "post_processor": None,
        "added": [],
    },
    "variant-whitespace-pretok": {
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "decoder": None,
        "post_processor": None,
        "added": [{"content": "cat", "lstrip": False, "rstrip": False, "single_word": True, "special": False}],
    },
}

VARIANT_TEXTS = FIXED[:60] + [
    "Hello World 123 4567!", "  The WOLF, the wolf; wolfish wolf.  ", "a [MASK] b   [MASK]c", "x <sep> y<sep>z",
    "Caf\u00e9 na\u00efve \u00c5ngstr\u00f6m", "Ｆｕｌｌ ﬁ ① ²", "cat concat cat, cats", "foo  bar\tbaz\nqux",
    "Once upon a time... there was a cat! Was it? Yes.", "loooong zoo moon o", "   ", "\u2581\u2581a  b",
]


def write_variants(shared, out):
    base = json.loads((shared / TOKENIZERS["tinystories"]).read_text(encoding="utf-8"))
    for name, spec in VARIANTS.items():
        doc = json.loads(json.dumps(base))
        for key in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
            doc[key] = spec[key]
        tok = Tokenizer.from_str(json.dumps(doc))
        for added in spec["added"]:
            token = tokenizers.AddedToken(added["content"], single_word=added["single_word"],
                                          lstrip=added["lstrip"], rstrip=added["rstrip"],
                                          normalized=False, special=added["special"])
            if added["special"]:
                tok.add_special_tokens([token])
            else:
                tok.add_tokens([token])
        tokenizer_json = json.loads(tok.to_str())
        rng = random.Random(99)
        cases = []
        for text in VARIANT_TEXTS + random_texts(rng, 60):
            with_special = tok.encode(text, add_special_tokens=True).ids
            cases.append({"text": text, "ids": tok.encode(text, add_special_tokens=False).ids,
                          "ids_with_special": with_special,
                          "decoded": tok.decode(with_special, skip_special_tokens=False),
                          "decoded_skip": tok.decode(with_special, skip_special_tokens=True)})
        decodes = [{"ids": seq, "decoded": tok.decode(seq, skip_special_tokens=False),
                    "decoded_skip": tok.decode(seq, skip_special_tokens=True)}
                   for seq in random_id_sequences(rng, tok, 40)]
        target = out / (name + ".json")
        target.write_text(json.dumps({"oracle": "python tokenizers " + tokenizers.__version__,
                                      "tokenizer_json": tokenizer_json, "cases": cases, "decodes": decodes},
                                     ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        print(name, len(cases), "cases,", target.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
