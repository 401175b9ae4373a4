//go:build race

package e2e_test

// raceDetector tells whether the tests were built with -race.
const raceDetector = true
