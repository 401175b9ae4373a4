package file

// Sniff exposes sniff to the external tests: nil when head is of mimeType.
var Sniff = sniff

// SniffSize is how much of a file sniff reads.
const SniffSize = sniffSize
