//! okr-eval (under construction in this commit series).
