package bloomstorage

// SetOwningHook sets the hook called between a request's mark in the
// frontier and its add to the visited set (nil: none).
func SetOwningHook(f func(id uint64)) { testHookOwning = f }

// RequestID is Colly's ID of a GET request of u.
func RequestID(u string) uint64 { return requestID(u, nil) }
