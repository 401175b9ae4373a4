-- +goose Up
-- What decoding an image file takes, in bytes, read from its header when
-- its bytes are stored: an image over the bound gets no thumbnail, so a
-- small file that decodes to hundreds of megabytes is never decoded. NULL
-- for other files, and for images stored before it was recorded (their
-- header is read again when a thumbnail is asked for).
ALTER TABLE files ADD COLUMN decoded_size BIGINT CONSTRAINT files_decoded_size_check CHECK (decoded_size > 0);
