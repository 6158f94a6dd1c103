"""Operations: per-operation timings, Prometheus metrics and structured logs. Imports no other
Cairn app: what it needs of the memory (its size, its state gauges) the site hands it at startup."""
