"""Operations: health, readiness, metrics, per-operation timings and structured logs."""
