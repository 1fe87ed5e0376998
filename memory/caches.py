"""How many entries the per-text caches keep (`functools.lru_cache`)."""

# The caches a fold reads through: a text's facts, a summary line's worth, the words of a
# label. One fold worker serves every chat, and each fold reads its chat's summary lines
# and opening exchanges again: at 600 chats, 8,192 entries let them go between two folds
# of a chat, and the worker read them anew each time (its CPU a turn, 600 chats × 24
# turns: 0.86 -> 0.51 ms, its memory +29 MB; 20 chats: 0.46 ms). A process that does not
# fold (the loop, beside a worker) fills them with its messages only, slowly.
FOLD_TEXTS = 65_536

# The readings the event loop takes again of every text in a chat's window, turn after
# turn: its token count, its topic terms and cue families, its casefolded form (the
# message's facts looked for), its neutralized form and its recall terms. A chat's window
# is 12 texts (6 exchanges), so 1,000 chats cycle through 12,000 of them and the summaries:
# at 4,096 entries each cache lost a text before its chat came round again and every turn
# read its window anew (600 chats x 24 turns, one at a time: BPE counts 189,756 -> 31,767,
# topic term sets 158,777 -> 29,083). Only these: the intermediate readings (a text's
# words, its fold) are read once a text when these keep it, and the message's own
# readings once a message, so theirs stay small; larger values would cost memory for
# nothing. Pure functions of the text: hit or miss, the same result.
WINDOW_TEXTS = 16_384
