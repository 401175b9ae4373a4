package statement

// OnRow sets the hook called after each row is read from the cursor.
func OnRow(f func()) func() {
	onRow = f
	return func() { onRow = nil }
}
