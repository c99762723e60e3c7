"""Flynn's evaluations, a dev tool kept out of the installed package: the benchmarks behind
``flynn bench`` and the recall sets they measure (``datasets``). They may import ``flynn``;
``flynn`` reaches them only through ``flynn bench`` (``evals.cli``), from a checkout."""
