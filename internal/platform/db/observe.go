package db

import "sync/atomic"

// QueryObserver is told each statement the program runs through a DB
// (outside and inside transactions) with its arguments, before it runs.
type QueryObserver func(query string, args []any)

// observer is a package-level hook rather than an Option: the servers
// tests start through app.Run open their database themselves, where no
// Option reaches. It costs one atomic load per statement while unset.
var observer atomic.Pointer[QueryObserver]

// ObserveQueries makes f see every statement run by every DB of this
// process until the returned stop is called. It is a test hook (the query
// plan test captures the queries of a real workload); f must be safe for
// concurrent use and must not keep args beyond what it copies.
func ObserveQueries(f QueryObserver) (stop func()) {
	observer.Store(&f)
	return func() { observer.CompareAndSwap(&f, nil) }
}

func observe(query string, args []any) {
	if f := observer.Load(); f != nil {
		(*f)(query, args)
	}
}
