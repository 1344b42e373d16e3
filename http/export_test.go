package http

// The inbox's session limits, for the external tests.
const (
	MaxPerToken = maxPerToken
	MaxStreams  = maxStreams
)
