// QR codes drawn in the browser (an authenticator's otpauth:// URI), with
// the vendored qrcode-generator: a GIF data: URL in an <img>, which the
// page's policy admits (img-src data:). Nothing leaves the page.

import qrcode from "./vendor/qrcode-generator/qrcode.mjs";

// qrDataURL is the QR code of text as a data: URL, cell pixels a module
// with a quiet zone of four modules.
export function qrDataURL(text, cell = 5) {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  return qr.createDataURL(cell, cell * 4);
}

// qrImage is an <img> of the QR code of text, described by alt;
// data-qr-text keeps what it encodes.
export function qrImage(text, alt) {
  const img = document.createElement("img");
  img.className = "qr";
  img.src = qrDataURL(text);
  img.alt = alt;
  img.dataset.qrText = text;
  return img;
}
