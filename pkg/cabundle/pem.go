package cabundle

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"
)

const certificateBlockType = "CERTIFICATE"

// ErrEmpty is returned by Parse for input that holds nothing but whitespace.
var ErrEmpty = errors.New("no certificates: the data is empty")

// Parse decodes PEM data of one or more CERTIFICATE blocks, strictly: anything
// but whitespace outside the blocks, another block type, PEM headers, or a
// block that is not a certificate is an error. A ca.crt with junk is more
// likely truncated or mixed up than annotated, and the syncer must not guess.
func Parse(data []byte) ([]*x509.Certificate, error) {
	rest := bytes.TrimSpace(data)
	if len(rest) == 0 {
		return nil, ErrEmpty
	}
	var certs []*x509.Certificate
	for n := 1; len(rest) > 0; n++ {
		block, after := pem.Decode(rest)
		switch {
		case !bytes.HasPrefix(rest, []byte("-----BEGIN ")): // pem.Decode silently skips text before a block
			return nil, fmt.Errorf("block %d: unexpected data outside a PEM block", n)
		case block == nil:
			return nil, fmt.Errorf("block %d: malformed PEM", n)
		case block.Type != certificateBlockType:
			return nil, fmt.Errorf("block %d: PEM type %q, want %q", n, block.Type, certificateBlockType)
		case len(block.Headers) != 0:
			return nil, fmt.Errorf("block %d: unexpected PEM headers", n)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		certs = append(certs, cert)
		rest = bytes.TrimSpace(after)
	}
	return certs, nil
}

// parseLenient returns every certificate in data and ignores the rest: in the
// bundle in place, a damaged entry must not hide the intact previous CAs.
func parseLenient(data []byte) []*x509.Certificate {
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil && block.Type == certificateBlockType {
			certs = append(certs, cert)
		}
	}
	return certs
}

// Encode returns certs as concatenated PEM CERTIFICATE blocks, in order.
func Encode(certs []*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: certificateBlockType, Bytes: c.Raw})...)
	}
	return out
}

// Fingerprint is the lowercase hex SHA-256 of a certificate's DER encoding,
// as `openssl x509 -fingerprint -sha256` prints it without colons.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}

// FormatTime writes a time as every message, log line and record of the
// project does: RFC 3339 in UTC, to the second.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Equal reports whether two bundles hold the same certificates in order, so
// that a caBundle wrapped or spaced differently is not rewritten for formatting
// alone. When either side does not parse, Equal compares bytes.
func Equal(a, b []byte) bool {
	ca, errA := Parse(a)
	cb, errB := Parse(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return slices.EqualFunc(ca, cb, (*x509.Certificate).Equal)
}
