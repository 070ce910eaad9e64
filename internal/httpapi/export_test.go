package httpapi

// Serving is how many requests f counts in flight now.
func (f *InFlight) Serving() int64 { return f.serving.Load() }
