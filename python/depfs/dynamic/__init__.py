"""Dynamic feature selection: how many templates each decision computes at parse time.

- :mod:`depfs.dynamic.strubell2015`: the prefix-margin rule for the arc-eager parser
  (Strubell et al. 2015), its margin sweeps and the presets chosen on dev.
"""
