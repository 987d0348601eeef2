"""An independent reference for `ampc tokenize --tokenizer` (docs/gpt.md,
"Tokenizers"): trains small BPE vocabularies on a text and writes them as
Hugging Face tokenizer.json files in the three shapes decoder models use,
and encodes text as those tokenizers do, written plainly after OpenAI's
GPT-2 encoder.py (merge the lowest-ranked pair everywhere, repeat).

  bpe_reference.py train TEXT MERGES DIR   writes DIR/{gpt2,digits,split,llama,llama-first}.json
  bpe_reference.py check TOKENIZER TEXT SHARD   compares ampc's shard with the reference
  bpe_reference.py joined WHOLE EOT PART...      whether WHOLE is the PARTs each followed by EOT
"""
import json
import struct
import sys

import regex

GPT2_WORDS = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# LLaMA 3's pre-tokenizer pattern (a Split before a ByteLevel without regex).
SPLIT_WORDS = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"""
               r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
SPACE = "\u2581"  # SentencePiece's "▁"


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xa1, 0xac + 1)) + list(range(0xae, 0xff + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_CHAR = bytes_to_unicode()


def byte_level(text):
    return "".join(BYTE_CHAR[b] for b in text.encode("utf-8"))


def train_merges(words, count):
    """`count` merges of the most frequent pair (ties: the smallest pair)."""
    counts = {}
    for w in words:
        counts[tuple(w)] = counts.get(tuple(w), 0) + 1
    merges = []
    for _ in range(count):
        pairs = {}
        for w, c in counts.items():
            for p in zip(w, w[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        counts = {tuple(merge_everywhere(list(w), best)): c for w, c in counts.items()}
    return merges


def merge_everywhere(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def bpe(symbols, ranks):
    while len(symbols) > 1:
        pairs = set(zip(symbols, symbols[1:]))
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        symbols = merge_everywhere(symbols, best)
    return symbols


def write(path, vocab, merges, as_lists, **steps):
    model = {"type": "BPE", "dropout": None, "unk_token": steps.pop("unk", None),
             "continuing_subword_prefix": None, "end_of_word_suffix": None,
             "fuse_unk": steps.pop("fuse_unk", False), "byte_fallback": steps.pop("byte_fallback", False),
             "ignore_merges": steps.pop("ignore_merges", False), "vocab": vocab,
             "merges": [list(m) if as_lists else " ".join(m) for m in merges]}
    root = {"version": "1.0", "truncation": None, "padding": None}
    root.update(steps)
    root["model"] = model
    with open(path, "w", encoding="utf-8") as f:
        json.dump(root, f, ensure_ascii=False)


def train(text_path, count, out):
    text = open(text_path, encoding="utf-8").read()
    byte_vocab = {c: i for i, c in enumerate(BYTE_CHAR[b] for b in sorted(BYTE_CHAR, key=lambda b: (b not in range(33, 127), b)))}

    def byte_level_vocab(words, extra):
        merges = train_merges(words, count)
        vocab = dict(byte_vocab)
        for a, b in merges:
            vocab.setdefault(a + b, len(vocab))
        added = [{"id": len(vocab), "content": extra, "single_word": False, "lstrip": False,
                  "rstrip": False, "normalized": False, "special": True}]
        return vocab, merges, added

    vocab, merges, added = byte_level_vocab([byte_level(w) for w in regex.findall(GPT2_WORDS, text)],
                                            "<|endoftext|>")
    byte_pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    write(out + "/gpt2.json", vocab, merges, False, added_tokens=added, normalizer=None,
          pre_tokenizer=byte_pre, post_processor=dict(byte_pre), decoder=dict(byte_pre))

    # StarCoder's shape: each digit alone, then GPT-2's byte-level words.
    write(out + "/digits.json", vocab, merges, False, added_tokens=added, normalizer=None,
          pre_tokenizer={"type": "Sequence", "pretokenizers": [
              {"type": "Digits", "individual_digits": True}, byte_pre]},
          decoder=dict(byte_pre))

    vocab, merges, added = byte_level_vocab([byte_level(w) for w in regex.findall(SPLIT_WORDS, text)],
                                            "<|begin_of_text|>")
    bos = added[0]["content"]
    write(out + "/split.json", vocab, merges, True, added_tokens=added, normalizer=None,
          pre_tokenizer={"type": "Sequence", "pretokenizers": [
              {"type": "Split", "pattern": {"Regex": SPLIT_WORDS}, "behavior": "Isolated", "invert": False},
              {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
          post_processor={"type": "Sequence", "processors": [
              {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                                                        {"Sequence": {"id": "A", "type_id": 0}}],
               "pair": [], "special_tokens": {bos: {"id": bos, "ids": [added[0]["id"]], "tokens": [bos]}}}]},
          decoder={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
          ignore_merges=True)

    # SentencePiece-style: "▁" for spaces, characters (a newline is left out,
    # so that it takes the byte fallback), <0xXX> for the rest.
    normal = SPACE + text.replace(" ", SPACE)
    words = [w for w in regex.split("(?=" + SPACE + ")|\n", normal) if w]
    merges = train_merges([list(w) for w in words], count)
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    for c in sorted(set(normal) - {"\n"}):
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(["<unk>", "<s>", "</s>"])]
    template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    common = dict(added_tokens=added, post_processor=template, unk="<unk>", fuse_unk=True,
                  byte_fallback=True)
    write(out + "/llama.json", vocab, merges, False,
          normalizer={"type": "Sequence", "normalizers": [
              {"type": "Prepend", "prepend": SPACE},
              {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]},
          pre_tokenizer=None,
          decoder={"type": "Sequence", "decoders": [
              {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
              {"type": "ByteFallback"}, {"type": "Fuse"},
              {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, **common)
    write(out + "/llama-first.json", vocab, merges, True, normalizer=None,
          pre_tokenizer={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
          decoder={"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
          **common)


def encode(tokenizer, text):
    vocab = tokenizer["model"]["vocab"]
    ranks = {}
    for i, m in enumerate(tokenizer["model"]["merges"]):
        ranks[tuple(m.split(" ") if isinstance(m, str) else m)] = i
    added = {t["content"]: t["id"] for t in tokenizer.get("added_tokens") or []}
    pre = tokenizer.get("pre_tokenizer") or {}
    prefix = []
    post = tokenizer.get("post_processor") or {}
    for p in post.get("processors", [post]):
        if p.get("type") == "TemplateProcessing":
            prefix = [i for item in p["single"] if "SpecialToken" in item
                      for i in p["special_tokens"][item["SpecialToken"]["id"]]["ids"]]
    ids = list(prefix)
    pattern = "(" + "|".join(regex.escape(t) for t in sorted(added, key=len, reverse=True)) + ")"
    for n, segment in enumerate(regex.split(pattern, text) if added else [text]):
        if segment in added and n % 2 == 1:
            ids.append(added[segment])
            continue
        if not segment:
            continue
        if pre.get("type") == "ByteLevel":
            for w in regex.findall(GPT2_WORDS, segment):
                ids += [vocab[s] for s in bpe(list(byte_level(w)), ranks)]
        elif pre.get("type") == "Sequence" and pre["pretokenizers"][0]["type"] == "Digits":
            for piece in regex.split(r"(\p{N})", segment):
                for w in regex.findall(GPT2_WORDS, piece):
                    ids += [vocab[s] for s in bpe(list(byte_level(w)), ranks)]
        elif pre.get("type") == "Sequence":
            for w in regex.findall(SPLIT_WORDS, segment):
                w = byte_level(w)
                ids += [vocab[w]] if w in vocab else [vocab[s] for s in bpe(list(w), ranks)]
        else:
            normal = segment.replace(" ", SPACE)
            if tokenizer.get("normalizer") or (n == 0 and not normal.startswith(SPACE)):
                normal = SPACE + normal  # Prepend normalizes every segment; Metaspace "first" the first
            symbols = []
            for c in normal:
                symbols += [c] if c in vocab else ["<0x%02X>" % b for b in c.encode("utf-8")]
            for s in bpe(symbols, ranks):
                ids.append(vocab[s])
    return ids


def read_shard(path):
    data = open(path, "rb").read()
    header = struct.unpack("<256i", data[:1024])
    width = {20240520: "H", 20240801: "I"}[header[0]]  # llm.c's GPT-2 and LLaMA 3 formats
    return list(struct.unpack("<%d%s" % (header[2], width), data[1024:]))


def joined(whole, eot, *parts):
    """Whether shard `whole` is the shards `parts`, each followed by token `eot`."""
    expected = [t for p in parts for t in read_shard(p) + [int(eot)]]
    print("joined" if read_shard(whole) == expected else "not joined: %s against %s" % (
        read_shard(whole), expected))


def check(tokenizer_path, text_path, shard_path):
    tokenizer = json.load(open(tokenizer_path, encoding="utf-8"))
    expected = encode(tokenizer, open(text_path, encoding="utf-8").read())
    got = read_shard(shard_path)
    if got != expected:
        at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        print("differ at token %d of %d/%d: ampc %s, reference %s" % (at, len(got), len(expected),
                                                                      got[at:at + 5], expected[at:at + 5]))
        return 1
    print("same %d tokens" % len(got))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "train":
        train(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "joined":
        joined(*sys.argv[2:])
    else:
        sys.exit(check(*sys.argv[2:5]))
