package bill

// DocumentOf exposes documentOf to the package's tests.
var DocumentOf = documentOf
