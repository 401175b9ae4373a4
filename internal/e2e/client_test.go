package e2e_test

// The happy paths go through the Go client (package client), as an
// integrator's code would, on a transport that validates every answer
// against api/openapi.yaml (apitest.Server.Client). What a typed client
// cannot send (unknown fields, malformed JSON, wrong types, missing
// headers) stays on apitest.Server.Do.
