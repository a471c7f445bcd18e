"""How2Score corrected with a study's human labels (PPI++): the estimate, its rankings per generator and topic, and the file format its command reads."""
