package cabundle

import (
	"bytes"
	"encoding/pem"
	"slices"
	"testing"
	"time"
)

func TestValidateRefusesAnythingButCACertificates(t *testing.T) {
	caA := newCA(t, "ca-a", 48*time.Hour)
	caB := newCA(t, "ca-b", time.Hour)
	leaf := newCert(t, "webhook.kyma-system.svc", now.Add(-time.Hour), now.Add(24*time.Hour), true)
	expiredCA := newCert(t, "expired", now.Add(-48*time.Hour), now.Add(-time.Hour), false)
	futureCA := newCert(t, "future", now.Add(time.Minute), now.Add(24*time.Hour), false)
	keyBlock := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	badDER := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not der")})
	withHeaders := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: caA.cert.Raw})

	tests := []struct {
		name   string
		source []byte
		want   Reason
		wantFP []string
	}{
		{name: "garbage_is_unparsable", source: []byte("this is not a certificate"), want: ReasonUnparsable},
		{name: "empty_source_is_refused", source: nil, want: ReasonEmpty},
		{name: "whitespace_only_is_refused_as_empty", source: []byte(" \n\t\n"), want: ReasonEmpty},
		{name: "pem_followed_by_junk_is_unparsable", source: join(caA.pem, []byte("junk")), want: ReasonUnparsable},
		{name: "junk_before_pem_is_unparsable", source: join([]byte("subject=CN=ca-a\n"), caA.pem), want: ReasonUnparsable},
		{name: "truncated_pem_is_unparsable", source: caA.pem[:len(caA.pem)-20], want: ReasonUnparsable},
		{name: "private_key_block_is_unparsable", source: join(caA.pem, keyBlock), want: ReasonUnparsable},
		{name: "non_der_certificate_block_is_unparsable", source: badDER, want: ReasonUnparsable},
		{name: "pem_headers_are_unparsable", source: withHeaders, want: ReasonUnparsable},
		{name: "leaf_certificate_is_not_a_ca", source: leaf.pem, want: ReasonNotCA},
		{name: "ca_followed_by_leaf_is_not_a_ca", source: join(caA.pem, leaf.pem), want: ReasonNotCA},
		{name: "expired_ca_is_refused", source: expiredCA.pem, want: ReasonExpired},
		{name: "expired_next_to_valid_is_dropped", source: join(expiredCA.pem, caA.pem), want: ReasonValid, wantFP: []string{caA.fp()}},
		{name: "not_yet_valid_is_accepted", source: futureCA.pem, want: ReasonValid, wantFP: []string{futureCA.fp()}},
		{name: "single_ca_is_valid", source: caA.pem, want: ReasonValid, wantFP: []string{caA.fp()}},
		{name: "surrounding_whitespace_is_valid", source: join([]byte("\n\n"), caA.pem, []byte("\n\n")), want: ReasonValid, wantFP: []string{caA.fp()}},
		{name: "duplicate_certificates_are_kept_once", source: join(caA.pem, caA.pem), want: ReasonValid, wantFP: []string{caA.fp()}},
		{name: "bundle_of_2_keeps_both", source: join(caA.pem, caB.pem), want: ReasonValid, wantFP: []string{caA.fp(), caB.fp()}},
		{name: "crlf_line_endings_are_valid", source: bytes.ReplaceAll(caA.pem, []byte("\n"), []byte("\r\n")), want: ReasonValid, wantFP: []string{caA.fp()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certs, v := Validate(tt.source, now)
			if v.Reason != tt.want {
				t.Fatalf("reason = %q (%s), want %q", v.Reason, v.Message, tt.want)
			}
			if v.Message == "" {
				t.Error("verdict has no message")
			}
			if v.Valid() != (tt.want == ReasonValid) {
				t.Errorf("Valid() = %v for reason %q", v.Valid(), v.Reason)
			}
			if got := fingerprints(certs); !slices.Equal(got, tt.wantFP) && (len(got) != 0 || len(tt.wantFP) != 0) {
				t.Errorf("certificates = %v, want %v", got, tt.wantFP)
			}
		})
	}
}

func TestEqualIgnoresWhitespaceButNotOrder(t *testing.T) {
	caA := newCA(t, "ca-a", 48*time.Hour)
	caB := newCA(t, "ca-b", time.Hour)
	tests := []struct {
		name string
		a, b []byte
		want bool
	}{
		{name: "same_bytes_are_equal", a: join(caA.pem, caB.pem), b: join(caA.pem, caB.pem), want: true},
		{name: "different_whitespace_is_equal", a: caA.pem, b: join([]byte("\n"), bytes.ReplaceAll(caA.pem, []byte("\n"), []byte("\r\n"))), want: true},
		{name: "different_order_is_unequal", a: join(caA.pem, caB.pem), b: join(caB.pem, caA.pem), want: false},
		{name: "subset_is_unequal", a: join(caA.pem, caB.pem), b: caA.pem, want: false},
		{name: "different_certificates_are_unequal", a: caA.pem, b: caB.pem, want: false},
		{name: "empty_and_certificate_are_unequal", a: nil, b: caA.pem, want: false},
		{name: "both_empty_are_equal", a: nil, b: []byte{}, want: true},
		{name: "same_garbage_is_equal", a: []byte("junk"), b: []byte("junk"), want: true},
		{name: "garbage_and_certificate_are_unequal", a: []byte("junk"), b: caA.pem, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
			if got := Equal(tt.b, tt.a); got != tt.want {
				t.Errorf("Equal (swapped) = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEncodeGivesBackTheParsedBundle(t *testing.T) {
	caA := newCA(t, "ca-a", 48*time.Hour)
	caB := newCA(t, "ca-b", time.Hour)
	certs, err := Parse(join(caA.pem, caB.pem))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Encode(certs), join(caA.pem, caB.pem); !bytes.Equal(got, want) {
		t.Errorf("Encode(Parse(x)) != x:\n%s\nwant\n%s", got, want)
	}
}
