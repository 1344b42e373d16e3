package http

// SetQuickCheck turns the quick path of POST /v1/check on or off, before
// the handler is built.
func (s *Server) SetQuickCheck(on bool) { s.noQuickCheck = !on }
