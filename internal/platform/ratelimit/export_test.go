package ratelimit

// Statements reports how many statements s has run to take tokens, so
// tests count the database writes that leasing saves.
func (s *Store) Statements() int64 { return s.statements.Load() }

// Leases reports how many leases s holds in memory.
func (s *Store) Leases() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.leases)
}

// Plan reports how s applies rule: the largest chunk a lease takes and the
// lease's life, which is also the reserve every take keeps.
func Plan(rule Rule) (chunk int64, life int64) {
	p := planFor(rule)
	return p.chunk, p.life
}
