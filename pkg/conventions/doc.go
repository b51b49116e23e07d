// Package conventions holds no code: its tests check rules that hold for
// all production code under pkg/ and cmd/, the test helper packages
// (certtest, syncertest, checktest) and tests excluded.
package conventions
