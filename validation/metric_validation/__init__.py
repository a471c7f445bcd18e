"""An automatic metric (a scorer's score) against human ratings of the same items: correlation, agreement and decision rules."""
