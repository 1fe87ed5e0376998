"""How many entries the per-text caches keep (`functools.lru_cache`)."""

# The caches a fold reads through: a text's facts, a summary line's worth, the words of a
# label. One fold worker serves every chat, and each fold reads its chat's summary lines
# and opening exchanges again: at 600 chats, 8,192 entries let them go between two folds
# of a chat, and the worker read them anew each time (its CPU a turn, 600 chats × 24
# turns: 0.86 -> 0.51 ms, its memory +29 MB; 20 chats: 0.46 ms). A process that does not
# fold (the loop, beside a worker) fills them with its messages only, slowly.
FOLD_TEXTS = 65_536
