package bankdetails_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/bankdetails"
)

// registryExamples are the example IBANs printed in the SWIFT IBAN registry.
var registryExamples = []string{
	"AD1200012030200359100100",
	"AE070331234567890123456",
	"AL47212110090000000235698741",
	"AT611904300234573201",
	"AZ21NABZ00000000137010001944",
	"BA391290079401028494",
	"BE68539007547034",
	"BG80BNBG96611020345678",
	"BH67BMAG00001299123456",
	"BR1800360305000010009795493C1",
	"CH9300762011623852957",
	"CR05015202001026284066",
	"CY17002001280000001200527600",
	"CZ6508000000192000145399",
	"DE89370400440532013000",
	"DK5000400440116243",
	"DO28BAGR00000001212453611324",
	"EE382200221020145685",
	"EG380019000500000000263180002",
	"ES9121000418450200051332",
	"FI2112345600000785",
	"FO6264600001631634",
	"FR1420041010050500013M02606",
	"GB29NWBK60161331926819",
	"GB82WEST12345698765432",
	"GE29NB0000000101904917",
	"GI75NWBK000000007099453",
	"GL8964710001000206",
	"GR1601101250000000012300695",
	"GT82TRAJ01020000001210029690",
	"HR1210010051863000160",
	"HU42117730161111101800000000",
	"IE29AIBK93115212345678",
	"IL620108000000099999999",
	"IQ98NBIQ850123456789012",
	"IS140159260076545510730339",
	"IT60X0542811101000000123456",
	"JO94CBJO0010000000000131000302",
	"KW81CBKU0000000000001234560101",
	"KZ86125KZT5004100100",
	"LB62099900000001001901229114",
	"LC55HEMM000100010012001200023015",
	"LI21088100002324013AA",
	"LT121000011101001000",
	"LU280019400644750000",
	"LV80BANK0000435195001",
	"MC5811222000010123456789030",
	"MD24AG000225100013104168",
	"ME25505000012345678951",
	"MK07250120000058984",
	"MR1300020001010000123456753",
	"MT84MALT011000012345MTLCAST001S",
	"MU17BOMM0101101030300200000MUR",
	"NL91ABNA0417164300",
	"NO9386011117947",
	"PK36SCBL0000001123456702",
	"PL61109010140000071219812874",
	"PS92PALS000000000400123456702",
	"PT50000201231234567890154",
	"QA58DOHB00001234567890ABCDEFG",
	"RO49AAAA1B31007593840000",
	"RS35260005601001611379",
	"SA0380000000608010167519",
	"SC18SSCB11010000000000001497USD",
	"SE4550000000058398257466",
	"SI56263300012039086",
	"SK3112000000198742637541",
	"SM86U0322509800000000270100",
	"ST23000100010051845310146",
	"SV62CENR00000000000000700025",
	"TL380080012345678910157",
	"TN5910006035183598478831",
	"TR330006100519786457841326",
	"UA213223130000026007233566001",
	"VA59001123000012345678",
	"VG96VPVG0000012345678901",
	"XK051212012345678906",
}

func TestCheckIBANRegistryExamples(t *testing.T) {
	for _, iban := range registryExamples {
		if err := bankdetails.CheckIBAN(iban); err != nil {
			t.Errorf("CheckIBAN(%q) = %v, want nil", iban, err)
		}
		if got, want := bankdetails.IBANCountry(iban), iban[:2]; got != want {
			t.Errorf("IBANCountry(%q) = %q, want %q", iban, got, want)
		}
	}
}

func TestCheckIBANNormalizes(t *testing.T) {
	for _, in := range []string{
		"DE89 3704 0044 0532 0130 00",
		"de89370400440532013000",
		"  gb82 west 1234 5698 7654 32 ",
		"FR14\u00a02004\u00a01010\u00a00505\u00a00001\u00a03M02\u00a0606", // no-break spaces
		"nl91abna0417164300\t",
	} {
		if err := bankdetails.CheckIBAN(in); err != nil {
			t.Errorf("CheckIBAN(%q) = %v, want nil", in, err)
		}
	}
	if got, want := bankdetails.NormalizeIBAN(" de89 3704 0044 0532 0130 00 "), "DE89370400440532013000"; got != want {
		t.Errorf("NormalizeIBAN = %q, want %q", got, want)
	}
	if got, want := bankdetails.IBANCountry("ch93 0076 2011 6238 5295 7"), "CH"; got != want {
		t.Errorf("IBANCountry = %q, want %q", got, want)
	}
	// Only ASCII letters are upper-cased: the dotless ı must not become I.
	if got := bankdetails.NormalizeIBAN("ıt"); got != "ıT" {
		t.Errorf("NormalizeIBAN(ıt) = %q", got)
	}
}

func TestCheckIBANRefuses(t *testing.T) {
	for _, tc := range []struct{ iban, msg string }{
		{"", "must not be empty"},
		{"   ", "must not be empty"},
		{"DE89370400440532013001", "the check digits are wrong"},    // last digit altered
		{"DE89370400440532103000", "the check digits are wrong"},    // two digits swapped
		{"DE88370400440532013000", "the check digits are wrong"},    // check digit altered
		{"GB82WEST12345698765433", "the check digits are wrong"},    // last digit altered
		{"NL91ABNA0417164301", "the check digits are wrong"},        // last digit altered
		{"DE8937040044053201300", "must be 22 characters for DE"},   // one short
		{"DE893704004405320130000", "must be 22 characters for DE"}, // one long
		{"NL91ABNA04171643000", "must be 18 characters for NL"},
		{"US64SVBKUS6S3300958879", "US is not a country that uses IBANs"},
		{"ZZ89370400440532013000", "ZZ is not a country that uses IBANs"},
		{"1289370400440532013000", "must start with a two-letter country code"},
		{"D", "must start with a two-letter country code"},
		{"DE8937040044053201300-", "must contain only letters A–Z and digits 0–9"},
		{"DE89370400440532013ÄÄ", "must contain only letters A–Z and digits 0–9"},
		{"DEX9370400440532013000", "the check digits (characters 3 and 4) must be digits"},
		{"DE00370400440532013000", "the check digits are wrong"},
		{"DE01370400440532013000", "the check digits are wrong"},
		{"DE99370400440532013000", "the check digits are wrong"},
	} {
		err := bankdetails.CheckIBAN(tc.iban)
		if err == nil {
			t.Errorf("CheckIBAN(%q) = nil, want %q", tc.iban, tc.msg)
			continue
		}
		if err.Error() != tc.msg {
			t.Errorf("CheckIBAN(%q) = %q, want %q", tc.iban, err, tc.msg)
		}
		if got := bankdetails.IBANCountry(tc.iban); got != "" {
			t.Errorf("IBANCountry(%q) = %q, want empty", tc.iban, got)
		}
	}
}

// Every single-digit change to a valid IBAN is caught by MOD 97-10.
func TestCheckIBANEverySingleDigitChange(t *testing.T) {
	for _, iban := range []string{"DE89370400440532013000", "FR1420041010050500013M02606", "CH9300762011623852957"} {
		for i := 2; i < len(iban); i++ {
			if iban[i] < '0' || iban[i] > '9' {
				continue
			}
			for d := byte('0'); d <= '9'; d++ {
				if d == iban[i] {
					continue
				}
				altered := iban[:i] + string(d) + iban[i+1:]
				if bankdetails.CheckIBAN(altered) == nil {
					t.Errorf("CheckIBAN(%q) = nil for an altered IBAN", altered)
				}
			}
		}
	}
}

func TestCheckBIC(t *testing.T) {
	for _, bic := range []string{"DEUTDEFF", "DEUTDEFF500", "NEDSZAJJXXX", "BNPAFRPP", "CHASUS33", "RBKOXKPR", "UBSWCHZH80A"} {
		if err := bankdetails.CheckBIC(bic); err != nil {
			t.Errorf("CheckBIC(%q) = %v, want nil", bic, err)
		}
	}
	for _, tc := range []struct{ bic, msg string }{
		{"", "must not be empty"},
		{"DEUTDEF", "must be 8 or 11 characters"},
		{"DEUTDEFF50", "must be 8 or 11 characters"},
		{"DEUTDEFF5000", "must be 8 or 11 characters"},
		{"deutdeff", "must be in upper case"},
		{"DEU1DEFF", "the bank code (characters 1–4) must be letters"},
		{"DEUTD3FF", "characters 5 and 6 must be a country code"},
		{"DEUTZZFF", "ZZ is not an ISO 3166 country code"},
		{"DEUTUKFF", "UK is not an ISO 3166 country code"},
		{"DEUTDEF-", "the location code (characters 7 and 8) must be letters or digits"},
		{"DEUTDEFF50_", "the branch code (characters 9–11) must be letters or digits"},
		{"DEUTDEFF 500", "must be 8 or 11 characters"},
	} {
		err := bankdetails.CheckBIC(tc.bic)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("CheckBIC(%q) = %v, want %q", tc.bic, err, tc.msg)
		}
	}
}

func TestCheckABA(t *testing.T) {
	for _, aba := range []string{"011000015", "021000021", "026009593", "121000358", "011000028", "322271627"} {
		if err := bankdetails.CheckABA(aba); err != nil {
			t.Errorf("CheckABA(%q) = %v, want nil", aba, err)
		}
	}
	for _, tc := range []struct{ aba, msg string }{
		{"", "must be 9 digits"},
		{"02100002", "must be 9 digits"},
		{"0210000210", "must be 9 digits"},
		{"02100002A", "must be 9 digits"},
		{"021000022", "the check digit is wrong"},
		{"121000359", "the check digit is wrong"},
		{"026009539", "the check digit is wrong"}, // transposed
		// Checksums hold (3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0),
		// prefixes are outside the Federal Reserve ranges.
		{"131000000", "the first two digits are not a valid Federal Reserve routing prefix"},
		{"401000000", "the first two digits are not a valid Federal Reserve routing prefix"},
		{"731000000", "the first two digits are not a valid Federal Reserve routing prefix"},
		{"811000000", "the first two digits are not a valid Federal Reserve routing prefix"},
		{"991000000", "the first two digits are not a valid Federal Reserve routing prefix"},
	} {
		err := bankdetails.CheckABA(tc.aba)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("CheckABA(%q) = %v, want %q", tc.aba, err, tc.msg)
		}
	}
}

func TestCheckCountry(t *testing.T) {
	for _, c := range []string{"US", "DE", "GB", "ZA", "XK", "AX", "SS", "CW", "BQ"} {
		if err := bankdetails.CheckCountry(c); err != nil {
			t.Errorf("CheckCountry(%q) = %v, want nil", c, err)
		}
	}
	for _, c := range []string{"", "U", "USA", "us", "Us", "UK", "EU", "ZZ", "YU", "AN", "1A"} {
		if err := bankdetails.CheckCountry(c); err == nil {
			t.Errorf("CheckCountry(%q) = nil, want an error", c)
		}
	}
	n := 0
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			if bankdetails.CheckCountry(string([]rune{a, b})) == nil {
				n++
			}
		}
	}
	if n != 250 { // 249 assigned codes and XK
		t.Errorf("%d country codes accepted, want 250", n)
	}
}

// Every country of the IBAN registry is an ISO 3166 country, and a BIC can
// be built from it.
func TestIBANCountriesAreCountries(t *testing.T) {
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			cc := string([]rune{a, b})
			msg := bankdetails.CheckIBAN(cc + "00").Error()
			if strings.HasSuffix(msg, "is not a country that uses IBANs") {
				continue
			}
			if err := bankdetails.CheckCountry(cc); err != nil {
				t.Errorf("IBAN country %s: CheckCountry: %v", cc, err)
			}
			if err := bankdetails.CheckBIC("ABCD" + cc + "2L"); err != nil {
				t.Errorf("IBAN country %s: CheckBIC: %v", cc, err)
			}
		}
	}
}

func TestCheckCryptoAddressValid(t *testing.T) {
	for _, tc := range []struct{ network, address string }{
		// Bitcoin: P2PKH, P2SH, P2WPKH (bech32), P2TR (bech32m).
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"},
		{"bitcoin", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"},
		{"bitcoin", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}, // genesis block
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{"bitcoin", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"},
		// BIP-173 / BIP-350 mainnet test vectors.
		{"bitcoin", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"},
		{"bitcoin", "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y"},
		{"bitcoin", "BC1SW50QGDZ25J"},
		{"bitcoin", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs"},
		{"bitcoin", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"},
		// EIP-55 test vectors, and the all-lower and all-upper forms.
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"ethereum", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"},
		{"ethereum", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"},
		{"ethereum", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"},
		{"ethereum", "0x52908400098527886E0F7030069857D2E4169EE7"},
		{"ethereum", "0xde709f2102306220921060314715629080e2fb77"},
		{"ethereum", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"},
		{"ethereum", "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED"},
		{"polygon", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"base", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"arbitrum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"tron", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"},
		{"solana", "11111111111111111111111111111111"}, // the system program: 32 zero bytes
	} {
		if err := bankdetails.CheckCryptoAddress(tc.network, tc.address); err != nil {
			t.Errorf("CheckCryptoAddress(%q, %q) = %v, want nil", tc.network, tc.address, err)
		}
	}
}

func TestCheckCryptoAddressRefuses(t *testing.T) {
	for _, tc := range []struct{ network, address, why string }{
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", "P2PKH, last character altered"},
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNvN2", "P2PKH, one letter's case flipped"},
		{"bitcoin", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLz", "P2SH, last character altered"},
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN", "P2PKH, truncated"},
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN0", "0 is not base58"},
		{"bitcoin", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL", "a Tron address (version 0x41)"},
		{"bitcoin", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "a testnet P2PKH address (version 0x6f)"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr", "bech32, last character altered"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mqd", "bech32, last two characters swapped"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5Mdq", "bech32, mixed case"},
		{"bitcoin", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3298", "bech32m, last character altered"},
		{"bitcoin", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg329", "bech32m, truncated"},
		{"bitcoin", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "testnet bech32"},
		// BIP-350 invalid mainnet addresses.
		{"bitcoin", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "v1 with a bech32 checksum"},
		{"bitcoin", "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", "v16 with a bech32 checksum"},
		{"bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", "v0 with a bech32m checksum"},
		{"bitcoin", "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", "invalid character in checksum"},
		{"bitcoin", "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "invalid witness version"},
		{"bitcoin", "bc1pw5dgrnzv", "1-byte program"},
		{"bitcoin", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", "41-byte program"},
		{"bitcoin", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "16-byte program for v0"},
		{"bitcoin", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", "more than 4 bits of padding"},
		{"bitcoin", "bc1gmk9yu", "empty data"},
		{"bitcoin", "", "empty"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "one letter's case flipped"},
		{"ethereum", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "one letter's case flipped"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", "39 hex digits"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0", "41 hex digits"},
		{"ethereum", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00", "no 0x"},
		{"ethereum", "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0X prefix"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", "g is not hex"},
		{"polygon", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d358", "last digit altered"},
		{"base", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6fB", "one letter's case flipped"},
		{"arbitrum", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "a Bitcoin address"},
		{"tron", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeM", "last character altered"},
		{"tron", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqe", "truncated"},
		{"tron", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "a Bitcoin address"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLt", "decodes to 31 bytes"},
		{"solana", strings.Repeat("z", 44), "decodes to 33 bytes"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLt0", "0 is not base58"},
		{"solana", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "an Ethereum address"},
		{"solana", "1111111111111111111111111111111", "31 zero bytes"},
	} {
		if err := bankdetails.CheckCryptoAddress(tc.network, tc.address); err == nil {
			t.Errorf("CheckCryptoAddress(%q, %q) = nil, want an error (%s)", tc.network, tc.address, tc.why)
		}
	}
}

func TestCheckCryptoAddressMessages(t *testing.T) {
	for _, tc := range []struct{ network, address, msg string }{
		{"dogecoin", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", "is not a supported network"},
		{"Ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "is not a supported network"},
		{"", "", "is not a supported network"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "the mixed-case (EIP-55) checksum is wrong"},
		{"ethereum", "0x123", "must be 0x followed by 40 hexadecimal characters"},
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", "the checksum is wrong"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr", "the checksum is wrong"},
		{"bitcoin", "bc1" + strings.Repeat("q", 100), "is too long to be an address"},
		{"bitcoin", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "is a testnet address, not a Bitcoin mainnet address"},
		{"bitcoin", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "is not a Bitcoin mainnet P2PKH or P2SH address"},
		{"bitcoin", "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "has an invalid witness version"},
		{"bitcoin", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "has an invalid witness program length"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5Mdq", "must not mix upper and lower case"},
		{"tron", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqe", "must be 34 characters starting with T"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLt", "must decode to a 32-byte public key"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtl", "must contain only base58 characters"},
	} {
		err := bankdetails.CheckCryptoAddress(tc.network, tc.address)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("CheckCryptoAddress(%q, %q) = %v, want %q", tc.network, tc.address, err, tc.msg)
		}
	}
}

func TestNetworks(t *testing.T) {
	got := bankdetails.Networks()
	want := []string{"arbitrum", "base", "bitcoin", "ethereum", "polygon", "solana", "tron"}
	if !slices.Equal(got, want) {
		t.Fatalf("Networks() = %v, want %v", got, want)
	}
	got[0] = "changed"
	if bankdetails.Networks()[0] != "arbitrum" {
		t.Error("Networks() returns a shared slice")
	}
}

func FuzzCheckIBAN(f *testing.F) {
	for _, s := range registryExamples {
		f.Add(s)
	}
	for _, s := range []string{"", " ", "DE", "DE89", "de89 3704 0044 0532 0130 00", "ZZ00", "\u00a0", "ıt89", "DE89370400440532013ÄÄ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := bankdetails.CheckIBAN(s)
		n := bankdetails.NormalizeIBAN(s)
		if bankdetails.NormalizeIBAN(n) != n {
			t.Fatalf("NormalizeIBAN is not idempotent on %q", s)
		}
		if (bankdetails.CheckIBAN(n) == nil) != (err == nil) {
			t.Fatalf("CheckIBAN(%q) and CheckIBAN(NormalizeIBAN) disagree", s)
		}
		country := bankdetails.IBANCountry(s)
		if err == nil {
			if err := bankdetails.CheckCountry(country); err != nil {
				t.Fatalf("valid IBAN %q: country %q: %v", s, country, err)
			}
		} else {
			if err.Error() == "" {
				t.Fatalf("CheckIBAN(%q): empty message", s)
			}
			if country != "" {
				t.Fatalf("IBANCountry(%q) = %q for an invalid IBAN", s, country)
			}
		}
	})
}

func FuzzCheckCryptoAddress(f *testing.F) {
	seeds := []struct{ network, address string }{
		{"bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"},
		{"bitcoin", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"},
		{"bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{"bitcoin", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"},
		{"bitcoin", "bc1"},
		{"bitcoin", "BC1SW50QGDZ25J"},
		{"ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		{"polygon", "0x"},
		{"tron", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL"},
		{"solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"},
		{"solana", "1"},
		{"unknown", ""},
	}
	for _, s := range seeds {
		f.Add(s.network, s.address)
	}
	f.Fuzz(func(t *testing.T, network, address string) {
		err := bankdetails.CheckCryptoAddress(network, address)
		if err != nil && err.Error() == "" {
			t.Fatalf("CheckCryptoAddress(%q, %q): empty message", network, address)
		}
		if err == nil && !slices.Contains(bankdetails.Networks(), network) {
			t.Fatalf("CheckCryptoAddress accepted unsupported network %q", network)
		}
		for _, n := range bankdetails.Networks() {
			if err := bankdetails.CheckCryptoAddress(n, address); err != nil && err.Error() == "" {
				t.Fatalf("CheckCryptoAddress(%q, %q): empty message", n, address)
			}
		}
	})
}
