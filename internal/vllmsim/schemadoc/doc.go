// Package schemadoc builds the JSON document the simulator writes for a
// structured-output request: a value that validates against the request's
// JSON schema, cut into the pieces it streams one a token. GuidedTokens
// tells a predictor how many tokens that is.
package schemadoc
