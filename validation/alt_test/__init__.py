"""The alternative annotator test (Calderon et al.) of a judge on a study, its sample-size planner and the file formats its command reads."""
