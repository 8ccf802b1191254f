"""Transaction assembly and the statement rewrites every consumer of row changes shares
(``output/`` writers, ``replay/``, ``stats``): below both, so neither imports the other
to reach them."""
