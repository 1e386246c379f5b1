//! okr-estimators (under construction in this commit series).
