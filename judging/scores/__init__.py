"""How2Score with uncertainty for one judge: the reads (bootstrap CIs per generator), the
rankings page's tables and plots, and the API view."""
