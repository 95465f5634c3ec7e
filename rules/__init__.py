"""memlint's rule catalogue: one module per rule, named after its code (`ml001_accumulated_graph`)."""
