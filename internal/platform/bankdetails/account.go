package bankdetails

import (
	"regexp"
	"strings"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// Account is the bank fields that name an account to pay: a fiat payment
// contact's, and the ones a bill reads from the supplier's invoice. Each is
// optional here; what a contact requires is the payment feature's rule.
type Account struct {
	AccountHolderName *string `json:"account_holder_name"`
	AccountNumber     *string `json:"account_number"`
	IBAN              *string `json:"iban"`
	SwiftCode         *string `json:"swift_code"`
	ABACode           *string `json:"aba_code"`
	BankCode          *string `json:"bank_code"`
	BankName          *string `json:"bank_name"`
	BankCountryAlpha2 *string `json:"bank_country_alpha2"`
	BranchCode        *string `json:"branch_code"`
	BSBCode           *string `json:"bsb_code"`
	CNAPS             *string `json:"cnaps"`
	IFSCCode          *string `json:"ifsc_code"`
	SortCode          *string `json:"sort_code"`
}

var (
	sixDigits = regexp.MustCompile(`^[0-9]{6}$`)
	ifsc      = regexp.MustCompile(`^[A-Z]{4}0[A-Z0-9]{6}$`)
	cnaps     = regexp.MustCompile(`^[0-9]{12}$`)
	accountNo = regexp.MustCompile(`^[A-Z0-9]{4,34}$`)
)

func nonEmpty(s *string) bool { return s != nil && strings.TrimSpace(*s) != "" }

func checkWith(f *apierr.Fields, field string, v *string, check func(string) error) {
	if v == nil {
		return
	}
	if err := check(*v); err != nil {
		f.Add(field, err.Error())
	}
}

// Check normalizes the IBAN and adds to f what is wrong with each bank
// field given: check digits of IBAN, BIC and ABA numbers, the form of the
// other codes. It does not ask for any field (a bill may hold some only).
func (b *Account) Check(f *apierr.Fields) {
	if b.IBAN != nil {
		n := NormalizeIBAN(*b.IBAN)
		b.IBAN = &n
	}
	checkWith(f, "iban", b.IBAN, CheckIBAN)
	checkWith(f, "swift_code", b.SwiftCode, CheckBIC)
	checkWith(f, "aba_code", b.ABACode, CheckABA)
	checkWith(f, "bank_country_alpha2", b.BankCountryAlpha2, CheckCountry)
	for field, v := range map[string]*string{"sort_code": b.SortCode, "bsb_code": b.BSBCode} {
		if v != nil {
			f.Check(sixDigits.MatchString(*v), field, "must be six digits.")
		}
	}
	if b.IFSCCode != nil {
		f.Check(ifsc.MatchString(*b.IFSCCode), "ifsc_code", "must be an 11-character IFSC code (4 letters, 0, 6 letters or digits).")
	}
	if b.CNAPS != nil {
		f.Check(cnaps.MatchString(*b.CNAPS), "cnaps", "must be a 12-digit CNAPS code.")
	}
	if b.AccountNumber != nil {
		f.Check(accountNo.MatchString(*b.AccountNumber), "account_number", "must be 4 to 34 capital letters or digits.")
	}
	for field, v := range map[string]*string{"account_holder_name": b.AccountHolderName, "bank_code": b.BankCode, "bank_name": b.BankName, "branch_code": b.BranchCode} {
		if v != nil {
			f.Check(nonEmpty(v) && len(*v) <= 140, field, "must be 1 to 140 characters.")
		}
	}
}
