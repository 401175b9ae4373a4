// Package bankdetails checks bank and payout identifiers: IBANs, BICs,
// US ABA routing numbers, ISO 3166-1 country codes and crypto addresses.
//
// Every check returns nil or an error whose Error() is a short sentence fit to
// show in an API's validation details (for example "the check digits are
// wrong"). The checks are syntactic: a valid IBAN or address is well formed and
// carries correct check digits, which says nothing about whether the account
// exists.
package bankdetails

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/crypto/sha3"
)

// ibanLengths is the SWIFT IBAN registry (release 102 and earlier releases
// back to 2024 agree on it): IBAN country code → total IBAN length. Dependent
// territories that use their parent's prefix (for example GF, RE, IM, JE, AX)
// have no entry of their own, because their IBANs start with FR, GB or FI.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28,
	"BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27, "BR": 29, "BY": 28,
	"CH": 21, "CR": 22, "CY": 28, "CZ": 24,
	"DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24,
	"FI": 18, "FK": 18, "FO": 18, "FR": 27,
	"GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HN": 28, "HR": 21, "HU": 28,
	"IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
	"JO": 30,
	"KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
	"MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30,
	"NI": 28, "NL": 18, "NO": 15,
	"OM": 23,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25,
	"QA": 29,
	"RO": 24, "RS": 22, "RU": 33,
	"SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26,
	"UA": 29,
	"VA": 22, "VG": 24,
	"XK": 20,
	"YE": 30,
}

// countries holds the 249 officially assigned ISO 3166-1 alpha-2 codes plus
// XK (Kosovo), a user-assigned code that SWIFT uses in IBANs and BICs.
var countries = func() map[string]bool {
	const list = "" +
		"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
		"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
		"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
		"DE DJ DK DM DO DZ " +
		"EC EE EG EH ER ES ET " +
		"FI FJ FK FM FO FR " +
		"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
		"HK HM HN HR HT HU " +
		"ID IE IL IM IN IO IQ IR IS IT " +
		"JE JM JO JP " +
		"KE KG KH KI KM KN KP KR KW KY KZ " +
		"LA LB LC LI LK LR LS LT LU LV LY " +
		"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
		"NA NC NE NF NG NI NL NO NP NR NU NZ " +
		"OM " +
		"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
		"QA " +
		"RE RO RS RU RW " +
		"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
		"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
		"UA UG UM US UY UZ " +
		"VA VC VE VG VI VN VU " +
		"WF WS " +
		"XK " +
		"YE YT " +
		"ZA ZM ZW"
	m := make(map[string]bool, 250)
	for i := 0; i+2 <= len(list); i += 3 {
		m[list[i:i+2]] = true
	}
	return m
}()

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpperAlnum(c byte) bool {
	return isUpper(c) || isDigit(c)
}

// ---------------------------------------------------------------------------
// IBAN

// NormalizeIBAN removes spaces (any Unicode white space, so a no-break space
// pasted from a PDF goes too) and upper-cases ASCII letters. Other characters
// are kept as they are, so CheckIBAN still refuses them.
func NormalizeIBAN(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
		case r >= 'a' && r <= 'z':
			b = append(b, byte(r-'a'+'A'))
		default:
			b = append(b, string(r)...)
		}
	}
	return string(b)
}

// CheckIBAN validates an IBAN. It checks NormalizeIBAN(iban), so the printed
// form ("de89 3704 0044 0532 0130 00") is accepted; store the normalized form.
// The country code must be in the SWIFT IBAN registry and the IBAN exactly as
// long as the registry says, the characters A–Z and 0–9 only, the check digits
// 02–98 and the ISO 7064 MOD 97-10 remainder 1.
func CheckIBAN(iban string) error {
	s := NormalizeIBAN(iban)
	if s == "" {
		return errors.New("must not be empty")
	}
	for i := 0; i < len(s); i++ {
		if !isUpperAlnum(s[i]) {
			return errors.New("must contain only letters A–Z and digits 0–9")
		}
	}
	if len(s) < 2 || !isUpper(s[0]) || !isUpper(s[1]) {
		return errors.New("must start with a two-letter country code")
	}
	cc := s[:2]
	want, ok := ibanLengths[cc]
	if !ok {
		return fmt.Errorf("%s is not a country that uses IBANs", cc)
	}
	if len(s) != want {
		return fmt.Errorf("must be %d characters for %s", want, cc)
	}
	if !isDigit(s[2]) || !isDigit(s[3]) {
		return errors.New("the check digits (characters 3 and 4) must be digits")
	}
	if check := int(s[2]-'0')*10 + int(s[3]-'0'); check < 2 || check > 98 {
		return errors.New("the check digits are wrong")
	}
	if ibanMod97(s) != 1 {
		return errors.New("the check digits are wrong")
	}
	return nil
}

// ibanMod97 computes ISO 7064 MOD 97-10 of s rearranged (the first four
// characters moved to the end, letters expanded to 10–35) digit by digit, so no
// big integers are needed. s must hold only A–Z and 0–9 and be at least 4 long.
func ibanMod97(s string) int {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A') + 10) % 97
		}
	}
	for i := 4; i < len(s); i++ {
		add(s[i])
	}
	for i := 0; i < 4; i++ {
		add(s[i])
	}
	return r
}

// IBANCountry returns the ISO 3166-1 alpha-2 country of a valid IBAN (its first
// two characters), or "" when CheckIBAN refuses it.
func IBANCountry(iban string) string {
	if CheckIBAN(iban) != nil {
		return ""
	}
	return NormalizeIBAN(iban)[:2]
}

// ---------------------------------------------------------------------------
// BIC, ABA, country

// CheckBIC validates a BIC (SWIFT code, ISO 9362): 8 or 11 upper-case
// characters: a 4-letter bank code, an assigned ISO 3166-1 country code, a
// 2-character alphanumeric location code and an optional 3-character
// alphanumeric branch code.
func CheckBIC(bic string) error {
	if bic == "" {
		return errors.New("must not be empty")
	}
	if len(bic) != 8 && len(bic) != 11 {
		return errors.New("must be 8 or 11 characters")
	}
	for i := 0; i < len(bic); i++ {
		if c := bic[i]; c >= 'a' && c <= 'z' {
			return errors.New("must be in upper case")
		}
	}
	for i := 0; i < 4; i++ {
		if !isUpper(bic[i]) {
			return errors.New("the bank code (characters 1–4) must be letters")
		}
	}
	if !isUpper(bic[4]) || !isUpper(bic[5]) {
		return errors.New("characters 5 and 6 must be a country code")
	}
	if !countries[bic[4:6]] {
		return fmt.Errorf("%s is not an ISO 3166 country code", bic[4:6])
	}
	if !isUpperAlnum(bic[6]) || !isUpperAlnum(bic[7]) {
		return errors.New("the location code (characters 7 and 8) must be letters or digits")
	}
	for i := 8; i < len(bic); i++ {
		if !isUpperAlnum(bic[i]) {
			return errors.New("the branch code (characters 9–11) must be letters or digits")
		}
	}
	return nil
}

// CheckABA validates a US ABA routing transit number: 9 digits, the first two
// in a Federal Reserve range (00–12, 21–32, 61–72 or 80), and
// 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10).
func CheckABA(aba string) error {
	if len(aba) != 9 {
		return errors.New("must be 9 digits")
	}
	var d [9]int
	for i := 0; i < 9; i++ {
		if !isDigit(aba[i]) {
			return errors.New("must be 9 digits")
		}
		d[i] = int(aba[i] - '0')
	}
	switch p := d[0]*10 + d[1]; {
	case p <= 12, p >= 21 && p <= 32, p >= 61 && p <= 72, p == 80:
	default:
		return errors.New("the first two digits are not a valid Federal Reserve routing prefix")
	}
	sum := 3*(d[0]+d[3]+d[6]) + 7*(d[1]+d[4]+d[7]) + (d[2] + d[5] + d[8])
	if sum%10 != 0 {
		return errors.New("the check digit is wrong")
	}
	return nil
}

// CheckCountry validates an upper-case ISO 3166-1 alpha-2 country code: one
// of the 249 officially assigned codes, or XK (Kosovo).
func CheckCountry(code string) error {
	if len(code) != 2 || !isUpper(code[0]) || !isUpper(code[1]) {
		return errors.New("must be a two-letter upper-case ISO 3166-1 country code")
	}
	if !countries[code] {
		return fmt.Errorf("%s is not an ISO 3166-1 country code", code)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Crypto addresses

var networks = []string{"arbitrum", "base", "bitcoin", "ethereum", "polygon", "solana", "tron"}

// Networks lists the networks CheckCryptoAddress supports, sorted.
func Networks() []string { return slices.Clone(networks) }

// maxAddressLen bounds the work done on hostile input; the longest address
// accepted (a bech32m witness program of 40 bytes) has 74 characters.
const maxAddressLen = 90

// CheckCryptoAddress validates an address on a network (one of Networks):
//
//   - "bitcoin" (mainnet): base58check P2PKH or P2SH (version 0x00 or 0x05,
//     double-SHA-256 checksum), or a native segwit "bc1…" address: bech32 for
//     witness version 0 (20- or 32-byte program), bech32m for versions 1–16
//     (2- to 40-byte program), per BIP-173 and BIP-350;
//   - "ethereum", "polygon", "base", "arbitrum": "0x" and 40 hex digits; a
//     mixed-case address must carry a correct EIP-55 checksum;
//   - "tron": 34 characters starting with "T", base58check with version 0x41;
//   - "solana": base58 that decodes to exactly 32 bytes.
func CheckCryptoAddress(network, address string) error {
	if !slices.Contains(networks, network) {
		return errors.New("is not a supported network")
	}
	if address == "" {
		return errors.New("must not be empty")
	}
	if len(address) > maxAddressLen {
		return errors.New("is too long to be an address")
	}
	switch network {
	case "bitcoin":
		return checkBitcoin(address)
	case "tron":
		return checkTron(address)
	case "solana":
		return checkSolana(address)
	default:
		return checkEVM(address)
	}
}

func checkBitcoin(a string) error {
	if len(a) >= 3 && strings.EqualFold(a[:3], "bc1") {
		return checkSegwit(a)
	}
	if len(a) >= 5 && (strings.EqualFold(a[:3], "tb1") || strings.EqualFold(a[:5], "bcrt1")) {
		return errors.New("is a testnet address, not a Bitcoin mainnet address")
	}
	payload, err := base58CheckDecode(a)
	if err != nil {
		return err
	}
	if len(payload) != 21 {
		return errors.New("is not a valid Bitcoin address")
	}
	if payload[0] != 0x00 && payload[0] != 0x05 {
		return errors.New("is not a Bitcoin mainnet P2PKH or P2SH address")
	}
	return nil
}

func checkTron(a string) error {
	if len(a) != 34 || a[0] != 'T' {
		return errors.New("must be 34 characters starting with T")
	}
	payload, err := base58CheckDecode(a)
	if err != nil {
		return err
	}
	if len(payload) != 21 || payload[0] != 0x41 {
		return errors.New("is not a valid Tron address")
	}
	return nil
}

func checkSolana(a string) error {
	b, ok := base58Decode(a)
	if !ok {
		return errors.New("must contain only base58 characters")
	}
	if len(b) != 32 {
		return errors.New("must decode to a 32-byte public key")
	}
	return nil
}

func checkEVM(a string) error {
	if len(a) != 42 || a[0] != '0' || a[1] != 'x' {
		return errors.New("must be 0x followed by 40 hexadecimal characters")
	}
	hex := a[2:]
	hasUpper, hasLower := false, false
	for i := 0; i < len(hex); i++ {
		switch c := hex[i]; {
		case isDigit(c):
		case c >= 'a' && c <= 'f':
			hasLower = true
		case c >= 'A' && c <= 'F':
			hasUpper = true
		default:
			return errors.New("must be 0x followed by 40 hexadecimal characters")
		}
	}
	if !hasUpper || !hasLower {
		return nil // all one case: carries no checksum
	}
	lower := []byte(hex)
	for i, c := range lower {
		if c >= 'A' && c <= 'F' {
			lower[i] = c - 'A' + 'a'
		}
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(lower)
	sum := h.Sum(nil)
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if isDigit(c) {
			continue
		}
		nibble := sum[i/2]
		if i%2 == 0 {
			nibble >>= 4
		}
		if wantUpper := nibble&0x0f >= 8; wantUpper != (c <= 'F') {
			return errors.New("the mixed-case (EIP-55) checksum is wrong")
		}
	}
	return nil
}

// base58 (Bitcoin alphabet)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		t[base58Alphabet[i]] = int8(i)
	}
	return t
}()

// base58Decode decodes s; ok is false if s holds a character outside the
// alphabet. Each leading '1' stands for one leading zero byte.
func base58Decode(s string) (out []byte, ok bool) {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// log(58)/log(256) ≈ 0.7322: bytes needed for the rest.
	b := make([]byte, (len(s)-zeros)*733/1000+1)
	for i := zeros; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, false
		}
		carry := int(v)
		for j := len(b) - 1; j >= 0; j-- {
			carry += 58 * int(b[j])
			b[j] = byte(carry)
			carry >>= 8
		}
	}
	k := 0
	for k < len(b) && b[k] == 0 {
		k++
	}
	out = make([]byte, zeros+len(b)-k)
	copy(out[zeros:], b[k:])
	return out, true
}

// base58CheckDecode decodes s and verifies and strips its 4-byte
// double-SHA-256 checksum, returning the version byte and payload.
func base58CheckDecode(s string) ([]byte, error) {
	b, ok := base58Decode(s)
	if !ok {
		return nil, errors.New("must contain only base58 characters")
	}
	if len(b) < 5 {
		return nil, errors.New("is too short to be an address")
	}
	payload, check := b[:len(b)-4], b[len(b)-4:]
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	if string(second[:4]) != string(check) {
		return nil, errors.New("the checksum is wrong")
	}
	return payload, nil
}

// bech32 / bech32m (BIP-173, BIP-350)

const (
	bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	bech32Const   = 1
	bech32mConst  = 0x2bc830a3
)

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := 0; i < 5; i++ {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

// checkSegwit validates a native segwit address for Bitcoin mainnet.
func checkSegwit(a string) error {
	invalid := errors.New("is not a valid Bitcoin segwit address")
	hasLower, hasUpper := false, false
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c < 33 || c > 126 {
			return invalid
		}
		if c >= 'a' && c <= 'z' {
			hasLower = true
		} else if c >= 'A' && c <= 'Z' {
			hasUpper = true
		}
	}
	if hasLower && hasUpper {
		return errors.New("must not mix upper and lower case")
	}
	s := []byte(a)
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			s[i] = c - 'A' + 'a'
		}
	}
	// The HRP is "bc" and the separator the last '1'; "bc1" is checked by the
	// caller, so the data part starts at index 3 and holds no '1' (not in the
	// charset).
	if len(s) < 14 || len(s) > 90 {
		return invalid
	}
	data := make([]byte, 0, len(s)-3)
	for _, c := range s[3:] {
		v := strings.IndexByte(bech32Charset, c)
		if v < 0 {
			return invalid
		}
		data = append(data, byte(v))
	}
	// HRP expansion of "bc": high bits, 0, low bits.
	values := make([]byte, 0, 5+len(data))
	values = append(values, 'b'>>5, 'c'>>5, 0, 'b'&31, 'c'&31)
	values = append(values, data...)
	constant := bech32Polymod(values)
	if constant != bech32Const && constant != bech32mConst {
		return errors.New("the checksum is wrong")
	}
	data = data[:len(data)-6]
	if len(data) < 1 {
		return invalid
	}
	version := data[0]
	if version > 16 {
		return errors.New("has an invalid witness version")
	}
	if (version == 0) != (constant == bech32Const) {
		return errors.New("the checksum is wrong")
	}
	program, ok := convertBits5to8(data[1:])
	if !ok {
		return invalid
	}
	if len(program) < 2 || len(program) > 40 {
		return errors.New("has an invalid witness program length")
	}
	if version == 0 && len(program) != 20 && len(program) != 32 {
		return errors.New("has an invalid witness program length")
	}
	return nil
}

// convertBits5to8 regroups 5-bit values into bytes. It refuses more than 4
// bits of padding and non-zero padding.
func convertBits5to8(in []byte) ([]byte, bool) {
	acc, bits := uint32(0), uint(0)
	out := make([]byte, 0, len(in)*5/8)
	for _, v := range in {
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	if bits >= 5 || acc&(1<<bits-1) != 0 {
		return nil, false
	}
	return out, true
}
