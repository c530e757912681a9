//! Reckle trees (work in progress).
