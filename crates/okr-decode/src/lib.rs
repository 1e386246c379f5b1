//! okr-decode (under construction in this commit series).
