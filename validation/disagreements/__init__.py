"""The items where a judge and the human majority (or the annotators) disagree, with their kinds, counts and CIs."""
