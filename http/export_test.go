package http

// The inbox's session limits and timings, for the external tests.
const (
	MaxPerToken       = maxPerToken
	MaxStreams        = maxStreams
	SessionCheckEvery = sessionCheckEvery
	SessionRoundGap   = sessionRoundGap
)
