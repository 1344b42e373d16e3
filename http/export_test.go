package http

// The inbox's session limits and timings, for the external tests.
const (
	MaxPerToken       = maxPerToken
	MaxStreams        = maxStreams
	SessionCheckEvery = sessionCheckEvery
	SessionRoundGap   = sessionRoundGap
)

// SetQuickCheck turns the quick path of POST /v1/check on or off, before
// the handler is built.
func (s *Server) SetQuickCheck(on bool) { s.noQuickCheck = !on }
