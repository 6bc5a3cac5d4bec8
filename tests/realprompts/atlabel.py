#!/usr/bin/env python3
"""tests/realprompts/atlabel.py: promptlint scored on each batch of the real
prompt corpus at labelling time, i.e. by the promptlint that existed before
anyone tuned a rule on that batch, beside today's promptlint on the same files.

What it does:
  - finds each batch's labelling commit in git history: the first commit whose
    LABELS.tsv has rows with column 7 exactly `vN` while its first parent has
    none (batches v2 and up; v1 predates any promptlint run on the corpus and
    has no column 7); new batches are picked up as they are committed;
  - builds bin/promptlint at each such commit in one temporary detached git
    worktree outside the repository (`nice make -j2 bin/promptlint`), and
    keeps the binaries by commit in a cache directory (--cache-dir, else
    $XDG_CACHE_HOME/cachet-atlabel, else ~/.cache/cachet-atlabel);
  - scores the batch's DEV files with that binary ("then") and with the
    current bin/promptlint ("now"), exactly as tests/test_lint_real.c does:
    each file linted under its upstream path (SOURCES.tsv column 3) with
    `--isolated --no-model --format json --stdin-filename PATH -`, error
    severity only; a positive labelled L is TP when an error lies on L-1..L+1,
    else FN, and also FP when an error lies before L-1; a negative is FP when
    it has any error;
  - prints tp/fp/fn, precision and recall per batch, by quarter of the batches
    and in total; --warnings PL008 also counts that rule's warnings as errors.

What it does not do:
  - read held files: rows are filtered on LABELS.tsv column 2 before any file
    is opened, and the open itself refuses any path not in the dev set;
  - use old labels or old excerpts: today's LABELS.tsv and files are scored by
    both binaries (a label fixed later counts as fixed at labelling too);
  - run as part of `make test` (which needs no Python); it is a measurement
    tool, Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

CORPUS = 'tests/realprompts'


# --- corpus ------------------------------------------------------------------

def parse_labels(text):
    """Dev rows of a LABELS.tsv text as dicts; held rows are dropped here,
    before anything else looks at them."""
    rows = []
    for line in text.splitlines():
        f = line.split('\t')
        if len(f) < 5 or f[1] != 'dev':
            continue
        rows.append({'file': f[0], 'label': f[2], 'line': int(f[3]),
                     'batch': f[6] if len(f) > 6 and f[6] else 'v1'})
    return rows


def batches_in(text):
    """The set of column-7 batch names in a LABELS.tsv text (any split; only
    the column is read)."""
    out = set()
    for line in text.splitlines():
        f = line.split('\t')
        if len(f) > 6 and f[6]:
            out.add(f[6])
    return out


def upstream_paths(root):
    """file -> its path in its own repository (SOURCES.tsv column 3)."""
    m = {}
    with open(os.path.join(root, CORPUS, 'SOURCES.tsv'), encoding='utf-8') as fh:
        for line in fh:
            f = line.rstrip('\n').split('\t')
            if len(f) >= 3:
                m[f[0]] = f[2]
    return m


def batch_num(b):
    return int(b[1:])


# --- git: labelling commits ------------------------------------------------------

def git(root, *args, check=True):
    r = subprocess.run(['git', '-C', root] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"atlabel: git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def labels_at(root, commit):
    return git(root, 'show', f'{commit}:{CORPUS}/LABELS.tsv', check=False)


def labelling_commits(root, rev):
    """batch -> the first commit (oldest first, topological order) whose
    LABELS.tsv names that batch in column 7, checked against its parent."""
    commits = git(root, 'rev-list', '--reverse', '--topo-order', rev, '--',
                  f'{CORPUS}/LABELS.tsv').split()
    found = {}
    for c in commits:
        for b in batches_in(labels_at(root, c)) - set(found):
            found[b] = c
    for b, c in found.items():
        parent = git(root, 'rev-parse', '--verify', '-q', c + '^', check=False).strip()
        if parent and b in batches_in(labels_at(root, parent)):
            sys.exit(f"atlabel: batch '{b}': parent of {c[:12]} already has it")
    return found


def touches_linter(root, commit):
    """Whether the labelling commit itself changes the linter (then its binary
    is not purely the one from before the batch)."""
    return bool(git(root, 'diff', '--name-only', commit + '^', commit, '--', 'linter/',
                    check=False).strip())


# --- builds ------------------------------------------------------------------

def build_all(root, commits, cache, jobs):
    """commit -> cached binary path, or None when the build failed. Builds
    the missing ones in one temporary detached worktree, removed at the end."""
    out, todo = {}, []
    for c in commits:
        p = os.path.join(cache, c, 'promptlint')
        if os.access(p, os.X_OK):
            out[c] = p
        else:
            todo.append(c)
    if not todo:
        return out
    tmp = tempfile.mkdtemp(prefix='cachet-atlabel-')
    wt = os.path.join(tmp, 'wt')
    git(root, 'worktree', 'add', '--detach', wt, todo[0])
    try:
        for i, c in enumerate(todo):
            git(wt, 'checkout', '-q', '--detach', c)
            print(f'atlabel: building {c[:12]} ({i + 1}/{len(todo)})', file=sys.stderr)
            r = subprocess.run(['nice', 'make', f'-j{jobs}', 'bin/promptlint'], cwd=wt,
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f'atlabel: build of {c[:12]} failed:\n{r.stderr[-2000:]}', file=sys.stderr)
                out[c] = None
                continue
            dst = os.path.join(cache, c)
            os.makedirs(dst, exist_ok=True)
            shutil.copy2(os.path.join(wt, 'bin', 'promptlint'), os.path.join(dst, 'promptlint.tmp'))
            os.replace(os.path.join(dst, 'promptlint.tmp'), os.path.join(dst, 'promptlint'))
            out[c] = os.path.join(dst, 'promptlint')
    finally:
        git(root, 'worktree', 'remove', '--force', wt, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# --- scoring -------------------------------------------------------------------

class DevOnly:
    """Opens corpus files, but only those of the dev split."""

    def __init__(self, root, rows):
        self.root = root
        self.dev = {r['file'] for r in rows}

    def open(self, file):
        if file not in self.dev:
            raise PermissionError(f"'{file}' is not a dev file; held files are never read")
        return open(os.path.join(self.root, CORPUS, file), 'rb')


def lint_lines(binary, corpus, file, upstream, extra_rules):
    """Lines of the error findings (and of the warnings of extra_rules)."""
    with corpus.open(file) as fh:
        r = subprocess.run([binary, '--isolated', '--no-model', '--format', 'json',
                            '--stdin-filename', upstream, '-'], stdin=fh, capture_output=True)
    try:
        js = json.loads(r.stdout.decode('utf-8', 'replace'))
    except ValueError:
        sys.exit(f"atlabel: {binary} on '{file}': exit {r.returncode}: "
                 f"{r.stderr.decode('utf-8', 'replace')[:300]}")
    findings = js['findings'] if isinstance(js, dict) else js
    return [f['line'] for f in findings
            if f.get('severity') == 'error'
            or (f.get('severity') == 'warning' and f.get('rule') in extra_rules)]


def verdict(label_line, lines):
    """(tp, fp, fn) of one file, as tests/test_lint_real.c counts them."""
    L = label_line
    hit = any(L and L - 1 <= x <= L + 1 for x in lines)
    early = any(not L or x < L - 1 for x in lines)
    return (int(bool(L) and hit), int(early), int(bool(L) and not hit))


def verdict_name(v):
    """'TP', 'FP+FN', 'TN'... as the test's details print them; 'NA' for none."""
    if v is None:
        return 'NA'
    return '+'.join(k for k, x in zip(('FP', 'TP', 'FN'), (v[1], v[0], v[2])) if x) or 'TN'


class Score:
    def __init__(self):
        self.files = self.tp = self.fp = self.fn = 0

    def add(self, v):
        self.files += 1
        self.tp += v[0]
        self.fp += v[1]
        self.fn += v[2]

    def merge(self, o):
        for k in ('files', 'tp', 'fp', 'fn'):
            setattr(self, k, getattr(self, k) + getattr(o, k))

    def text(self):
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        return f'{self.tp:3d}/{self.fp:3d}/{self.fn:3d}  P {p:.3f}  R {r:.3f}'


def quarters(batches):
    """The batch list cut into four runs of (nearly) equal length."""
    n = len(batches)
    cuts = [i * n // 4 for i in range(5)]
    return [batches[cuts[i]:cuts[i + 1]] for i in range(4) if cuts[i] < cuts[i + 1]]


# --- main ----------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--repo', default=None, help='repository root (default: the one holding this script)')
    ap.add_argument('--rev', default='HEAD', help='history searched for labelling commits (default HEAD)')
    ap.add_argument('--now', default=None, help="today's binary (default REPO/bin/promptlint)")
    ap.add_argument('--cache-dir', default=None, help='where built binaries are kept by commit')
    ap.add_argument('--jobs', type=int, default=2, help='make -j for the builds (default 2)')
    ap.add_argument('--first', default='v2', help='first batch scored (default v2)')
    ap.add_argument('--last', default=None, help='last batch scored (default: the newest)')
    ap.add_argument('--warnings', default='', metavar='RULES',
                    help='comma-separated rules whose warnings count as errors (e.g. PL008)')
    ap.add_argument('--tsv', default=None, metavar='FILE',
                    help='also write one line per dev file: batch, file, label line, then and now verdicts')
    a = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    root = a.repo or git(here, 'rev-parse', '--show-toplevel').strip()
    now_bin = a.now or os.path.join(root, 'bin', 'promptlint')
    if not os.access(now_bin, os.X_OK):
        sys.exit(f"atlabel: '{now_bin}': no such binary (run make bin/promptlint)")
    cache = a.cache_dir or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'cachet-atlabel')
    extra = {r.strip() for r in a.warnings.split(',') if r.strip()}

    with open(os.path.join(root, CORPUS, 'LABELS.tsv'), encoding='utf-8') as fh:
        rows = parse_labels(fh.read())
    corpus = DevOnly(root, rows)
    src = upstream_paths(root)

    found = labelling_commits(root, a.rev)
    lo, hi = batch_num(a.first), batch_num(a.last) if a.last else 10 ** 9
    batches = sorted((b for b in found if b != 'v1' and lo <= batch_num(b) <= hi), key=batch_num)
    bins = build_all(root, [found[b] for b in batches], cache, a.jobs)

    per = {}
    tsv = open(a.tsv, 'w', encoding='utf-8') if a.tsv else None
    for b in batches:
        then, now = Score(), Score()
        binary = bins.get(found[b])
        for r in (r for r in rows if r['batch'] == b):
            L = r['line'] if r['label'] == 'positive' else 0
            up = src.get(r['file'])
            if up is None:
                sys.exit(f"atlabel: '{r['file']}': no line in SOURCES.tsv")
            vn = verdict(L, lint_lines(now_bin, corpus, r['file'], up, extra))
            now.add(vn)
            vt = verdict(L, lint_lines(binary, corpus, r['file'], up, extra)) if binary else None
            if vt:
                then.add(vt)
            if tsv:
                tsv.write(f"{b}\t{r['file']}\t{L}\t{verdict_name(vt)}\t{verdict_name(vn)}\n")
        per[b] = (then, now, binary is not None)
    if tsv:
        tsv.close()

    mode = f" (warnings of {','.join(sorted(extra))} counted as errors)" if extra else ''
    print(f"promptlint at labelling vs now, dev files only{mode}; now = {now_bin}")
    print(f"{'batch':8} {'commit':12} {'files':>5}  {'then tp/fp/fn':22}  {'now tp/fp/fn':22}")
    for b in batches:
        then, now, ok = per[b]
        note = '' if ok else '  (build failed: then not scored)'
        if ok and touches_linter(root, found[b]):
            note = '  (labelling commit also changes linter/)'
        t = then.text() if ok else '-'
        print(f'{b:8} {found[b][:12]} {now.files:5d}  {t:22}  {now.text()}{note}')

    def total(label, bs):
        then, now = Score(), Score()
        for b in bs:
            if per[b][2]:
                then.merge(per[b][0])
            now.merge(per[b][1])
        span = f'{bs[0]}-{bs[-1]}' if bs else '-'
        print(f'{label:8} {span:12} {now.files:5d}  {then.text():22}  {now.text()}')

    print('by quarter of the batches:')
    for q in quarters(batches):
        total('quarter', q)
    total('total', batches)


if __name__ == '__main__':
    main()
