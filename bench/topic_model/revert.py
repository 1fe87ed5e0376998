"""The soft reset's revert, rules vs a learned one, in the topic trainer's cross-validation.

    python -m bench.topic_model.revert [--thresholds 0.45,0.5,0.525] [--limit N]
        [--heldout bench/data/support_dev bench/data/support_multicase]

The product undoes an automatic reset when one of the next `REVERT_WITHIN` messages
continues the closed case (`memory.soft_reset.revert`): by its facts, by its words
(`shared_terms`, a continuation cue, an answer to the bot's last question), or by the
bot's reply naming the case. This bench asks whether the word branches, hand-written,
cost true resets, and whether a logistic regression over the same readings does better:

- `rules`: the product's `decide_revert`;
- `no_words`: the rules without the word branches (facts and the bot's reply only);
- `learned@r`: the facts and reply branches, and for words a regression (numpy, the
  trainer's `fit`) over what those branches read (`features`), reverting at p ≥ r.

Rows: every support training unit of `bench.topic_model.train` (the labelled `fit`
half, the written sessions, the long cases, spliced sessions within a fold), each turn t
taken as a reset and each of the next `REVERT_WITHIN` messages a row: does it still
belong to the case open before t (no gold reset in between)? Each fold's topic model and
revert model are fitted without that fold; the held-out fold's dialogues are replayed as
the product runs them (`soft.replay_standing`) and scored as the trainer scores support:
resets that stand, precision, recall, standing resets on distractors (`safe`: issue
28's bar). Training data only, unless `--heldout` names written folders: then the
shipped topic model (at each threshold) and a revert model fitted on every training row
are scored there too, in aggregate only, on the sessions and on the long cases read as
sessions that never reset (their standing resets; `bench.blind` replays them whole). The
blind folder is refused: `python -m bench.blind` alone reads it.
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench import blind, topic_tiage, topics
from bench.blind.data import load_topic_set
from bench.topic_model import data as support_data
from bench.topic_model import train
from bench.topic_model.scores import Counts
from bench.topic_model.soft import RevertRule, _exchanges, _replay, replay_standing
from memory.facts import facts_of
from memory.recall.terms import hard_terms, terms
from memory.soft_reset import revert as rules
from memory.soft_reset.case import mentioned, previous_case
from memory.text.fold import fold
from memory.topic.learned import detect_learned
from memory.topic.model import Head, load_model

FEATURES = (
    "old_facts", "old_ids", "own_facts", "new_hard", "old_terms", "new_terms", "terms",
    "old_share", "question_taken", "short_yes_no", "cue", "since_reset", "opener_old_terms",
    "opener_old_facts", "opener_terms", "reply_ids", "log_words", "asks",
)  # fmt: skip
TOPIC = (0.1, 3.0)  # the shipped support head's L2 and support weight (topic-v4)
THRESHOLDS = (0.45, 0.475, 0.5, 0.525, 0.55)
REVERT_AT = (0.8, 0.85, 0.9, 0.95)
WINDOW = topics.DEFAULT_WINDOW


def features(check: rules.RevertCheck) -> list[float]:
    """What the rules' branches read of a message after a reset, as numbers."""
    prev, message = check.previous, check.message
    assert prev is not None
    words = frozenset(terms(message))
    own = frozenset(t for ex in check.episode for t in terms(ex.user_text))
    case = frozenset(prev.terms)
    old, new = (words & case) - own, (words & own) - case
    ids = tuple(f for f in prev.facts if f[0] in rules.CASE_ID_KINDS)
    own_facts = [f for f in facts_of(message) if not mentioned(prev.facts, f.value, runs=False)]
    said = {t for ex in check.episode for t in hard_terms(f"{ex.user_text}\n{ex.reply_text}")}
    case_hard = {t for _, v in prev.facts for t in hard_terms(v)}
    taken = (words & frozenset(terms(prev.question))) - own if prev.question else frozenset()
    folded = fold(message)
    asked = any("?" in ex.reply_text for ex in check.episode)
    short = len(message.split()) <= rules.SHORT_ANSWER and not asked
    opener = check.episode[0].user_text if check.episode else ""
    reply = check.episode[-1].reply_text if check.episode else ""
    return [
        len(mentioned(prev.facts, message)), len(mentioned(ids, message, runs=False)),
        len(own_facts), len((hard_terms(message) & said) - case_hard), len(old), len(new),
        len(words), len(old) / max(1, len(words)), len(taken),
        float(short and rules._YES_NO.search(folded) is not None),
        float(rules._CUE.search(folded) is not None), check.since_reset,
        len(frozenset(terms(opener)) & case), len(mentioned(prev.facts, opener)),
        len(frozenset(terms(opener))), len(mentioned(ids, reply, runs=False)),
        math.log1p(len(message.split())), float("?" in message),
    ]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Row:
    x: list[float]
    continues: bool  # the message still belongs to the case open before the reset


def rows_of(unit: train.Unit) -> list[Row]:
    """Each turn t of a support unit taken as a reset, and the next messages' rows."""
    turns, gold = unit.turns, unit.gold
    starts, start = [], 0
    for i, reset in enumerate(gold):
        start = i if i and reset else start
        starts.append(start)
    out = []
    for t in range(1, len(turns)):
        closed = _exchanges(turns, starts[t - 1], t)
        case = previous_case(1, closed, closed[-1].reply_text)
        for j in range(t + 1, min(len(turns), t + 1 + rules.REVERT_WITHIN)):
            episode = _exchanges(turns, t, j)
            check = rules.RevertCheck(turns[j].user, case, "auto:bench", episode, j - t)
            out.append(Row(features(check), not any(gold[t : j + 1])))
    return out


def without_words(check: rules.RevertCheck) -> rules.Revert | None:
    """The product's rule without its word branches."""
    prev = check.previous
    if prev is None or not (check.opened_by or "").startswith("auto:"):
        return None
    if check.since_reset > rules.REVERT_WITHIN:
        return rules._by_case_ids(check.message, prev) or rules._by_reply(check, prev)
    return rules._by_facts(check, prev) or rules._by_reply(check, prev)


def learned(model: train.Fit, at: float) -> RevertRule:
    """The product's rule with its word branches replaced by `model` at p ≥ `at`."""

    def decide(check: rules.RevertCheck) -> rules.Revert | None:
        found = without_words(check)
        early = check.previous is not None and check.since_reset <= rules.REVERT_WITHIN
        auto = (check.opened_by or "").startswith("auto:")
        if found is None and early and auto and model.probability(features(check)) >= at:
            return rules.Revert("shared_terms", ())
        return found

    return decide


def cross_validate(
    units: Sequence[train.Unit], thresholds: Sequence[float], k: int = 5
) -> dict[tuple[float, str], Counts]:
    """Per (topic threshold, revert arm): support counts pooled over held-out folds."""
    rows = {u.name: rows_of(u) for u in units if u.source == "support"}
    counts: dict[tuple[float, str], Counts] = defaultdict(Counts)
    for f in range(k):
        topic = train.fit_units([u for u in units if u.fold != f], *TOPIC)
        arms = arms_of(fit_revert([r for u in units if u.fold != f for r in rows.get(u.name, ())]))
        for unit in units:
            if unit.fold != f or unit.source != "support":
                continue
            p = _probability(topic, unit)
            for th in thresholds:
                for name, arm in arms.items():
                    counts[(th, name)].add(unit, replay_standing(unit.turns, p, th, arm))
    return counts


def arms_of(model: train.Fit) -> dict[str, RevertRule]:
    """The revert arms, the learned ones over `model`."""
    arms: dict[str, RevertRule] = {"rules": rules.decide_revert, "no_words": without_words}
    return arms | {f"learned@{r}": learned(model, r) for r in REVERT_AT}


def fit_revert(rows: Sequence[Row]) -> train.Fit:
    x = np.array([r.x for r in rows], dtype=float)
    y = np.array([r.continues for r in rows], dtype=float)
    return train.fit(x, y, np.ones(len(y)), 0.01)


def heldout(
    folder: Path, units: Sequence[train.Unit], thresholds: Sequence[float]
) -> dict[tuple[str, float, str], blind.TopicScore]:
    """Per (set, topic threshold, arm) on a written folder: aggregate scores only."""
    if folder.resolve() == blind.DEFAULT_DATA.resolve():
        raise SystemExit("the blind folder is read by `python -m bench.blind` alone")
    model = fit_revert([r for u in units if u.source == "support" for r in rows_of(u)])
    sets = [(t, load_topic_set(folder / f, None)) for t, f in blind.topic_sets(folder, False)]
    if (folder / "longcase.jsonl").exists():
        sets.append(("long cases", list(support_data.long_sessions(folder / "longcase.jsonl"))))
    out = {}
    for title, sessions in sets:
        for th in thresholds:
            detect = _shipped(replace(load_model("support"), threshold=th))
            for name, arm in arms_of(model).items():
                run = _standing(arm)
                out[(title, th, name)] = blind.score_topics(sessions, detect, WINDOW, run)
    return out


def _shipped(model: Head) -> topics.Detector:
    return lambda ctx: detect_learned(ctx, "support", model)


def _standing(arm: RevertRule) -> topics.Predictor:
    """`soft.predict_standing` with `arm` for the revert."""

    def run(session: topics.Session, detect: topics.Detector, window: int) -> list[bool]:
        turns = session.turns

        def resets(start: int, i: int) -> bool:
            episode = _exchanges(turns, start, i)[-window:]
            return detect(topics.turn_context(session, turns[i], episode, turns[i - 1].ts)).reset

        return _replay(turns, resets, arm)[0]

    return run


def _probability(topic: train.Fit, unit: train.Unit) -> Callable[[int, int], float]:
    return lambda start, i: topic.probability(unit.features(start, i))


def main(argv: Sequence[str] | None = None) -> dict[tuple[float, str], Counts]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    parser.add_argument("--limit", type=int, default=0, help="first N dialogues of each set")
    parser.add_argument("--heldout", type=Path, nargs="*", default=[], help="written folders")
    args = parser.parse_args(argv)
    dialogs = topic_tiage.load(topic_tiage.DEFAULT_DATA, "train")
    sessions = list(support_data.load().training)
    if args.limit:
        dialogs, sessions = dialogs[: args.limit], sessions[: args.limit]
    units = train.build_units(dialogs, sessions, 5, train.SPLICE)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    counts = cross_validate(units, thresholds)
    print(f"== revert arms, grouped 5-fold CV on the topic trainer's units (L2 {TOPIC[0]}, "
          f"support weight {TOPIC[1]}): resets that stand")  # fmt: skip
    for (th, name), c in sorted(counts.items()):
        print(f"  topic ≥ {th:<6} {name:<14} P {c.precision:.3f}  R {c.recall:.3f}  "
              f"fp {c.fp:>4}  distractor resets {c.side:>3} of {c.distractors}  "
              f"{'safe' if c.safe else '-'}")  # fmt: skip
    for folder in args.heldout:
        print(f"== {folder.name} (held out, aggregate only): shipped topic model, revert "
              "fitted on every training row; resets that stand")  # fmt: skip
        for (title, th, name), sc in heldout(folder, units, thresholds).items():
            r = sc.result
            print(f"  {title:<10} topic ≥ {th:<6} {name:<14} P {r.precision:.2f}  "
                  f"R {r.recall:.2f}  fp {r.fp:>3}  distractor resets {sc.distractor_resets} "
                  f"of {sc.distractors}")  # fmt: skip
    return counts


if __name__ == "__main__":
    main()
