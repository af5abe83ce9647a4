"""The read side: what a results store says, for a terminal, an HTML page and export tables (rates
with Wilson 95% intervals, paired comparisons, figures). It reads rows and runs no case; the run
side (`randori.bench`) never imports it."""
