#!/usr/bin/env python3
"""tests/realprompts/blind/names/smol.py: can the project's own model judge a
placeholder name? Asks SmolLM2-135M-Instruct (bin/cachet generate, greedy,
eight worked examples) for V or S on each name of NAMES.tsv and scores it on
the names both readers (OUT-P.tsv, OUT-Q.tsv) put in the same class.
Run from the repository root after `make run` fetched the model:
    python3 tests/realprompts/blind/names/smol.py [--last-shot V|S]
"""
import collections
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))


def tsv(name):
    with open(os.path.join(HERE, name), encoding='utf-8') as f:
        return [l.rstrip('\n').split('\t') for l in f if l.strip()]


def main():
    last = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == '--last-shot' else 'S'
    shots = [('{question}', 'V'), ('{company_name}', 'S'), ('{current_date}', 'V'), ('{output_format}', 'S'),
             ('{chat_history}', 'V'), ('{max_words}', 'S'), ('{user_name}', 'V'), ('{tool_descriptions}', 'S')]
    if last == 'V':  # the same examples, the last one volatile
        shots = [shots[i ^ 1] for i in range(len(shots))]
    head = ('Decide whether each prompt-template placeholder changes per request (V) or is fixed '
            'configuration (S).\n\n' + ''.join(f'Placeholder: {n}\nAnswer: {a}\n\n' for n, a in shots))
    model = os.path.join(ROOT, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf')
    said = {}
    for i, n in tsv('NAMES.tsv'):
        r = subprocess.run([os.path.join(ROOT, 'bin', 'cachet'), 'generate', '--model', model, '--prompt',
                            head + f'Placeholder: {n}\nAnswer:', '--temp', '0', '--max-tokens', '2'],
                           capture_output=True, text=True)
        said[i] = r.stdout.strip()[:1]
    p = {r[0]: r[1] for r in tsv('OUT-P.tsv')}
    q = {r[0]: r[1] for r in tsv('OUT-Q.tsv')}
    both = [i for i in p if p[i] == q.get(i) and p[i] in ('V', 'S')]
    for c in ('V', 'S'):
        xs = [i for i in both if p[i] == c]
        print(f'readers {c}: {len(xs)} names, the model says {c} on {sum(said[i] == c for i in xs)}')
    print('the model\'s answers on them:', dict(collections.Counter(said[i] for i in both)))


if __name__ == '__main__':
    main()
