// Fixed-length records of doubles kept on disk (an anonymous temporary file) rather than in memory, so that what a
// run keeps per frame does not grow its memory; read back in order, a chunk at a time.
#pragma once

#include <cstdio>
#include <memory>
#include <vector>

#include "core/error.hpp"

namespace framesim::analysis {

class RecordSpill {
 public:
  explicit RecordSpill(std::size_t record_length) : length_(record_length) {}

  void append(const std::vector<double>& record) {
    FRAMESIM_ASSERT(record.size() == length_, "spilled records have one length");
    append(record.data());
  }
  /// Appends the record_length() doubles at `record`.
  void append(const double* record) {
    buffer_.insert(buffer_.end(), record, record + length_);
    ++count_;
    if (buffer_.size() >= kChunkDoubles) flush();
  }
  std::size_t size() const { return count_; }

  /// Calls `f(const double* record)` for every record, in the order appended.
  template <class F>
  void for_each(F&& f) const {
    if (file_) {
      std::rewind(file_.get());
      std::vector<double> chunk(kChunkDoubles - kChunkDoubles % length_);
      std::size_t left = written_;
      while (left > 0) {
        const std::size_t want = std::min(chunk.size(), left);
        if (std::fread(chunk.data(), sizeof(double), want, file_.get()) != want)
          throw core::UserError("cannot read a run's temporary file back");
        for (std::size_t i = 0; i + length_ <= want; i += length_) f(chunk.data() + i);
        left -= want;
      }
      std::fseek(file_.get(), 0, SEEK_END);
    }
    for (std::size_t i = 0; i + length_ <= buffer_.size(); i += length_) f(buffer_.data() + i);
  }

 private:
  static constexpr std::size_t kChunkDoubles = 1 << 14;
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  void flush() {
    if (!file_) file_.reset(std::tmpfile());
    if (!file_) return;  // no temporary file to be had: the records stay in memory
    if (std::fwrite(buffer_.data(), sizeof(double), buffer_.size(), file_.get()) != buffer_.size())
      throw core::UserError("cannot write a run's temporary file (is the disk full?)");
    written_ += buffer_.size();
    buffer_.clear();
  }

  std::size_t length_;
  std::vector<double> buffer_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::size_t written_ = 0;  // doubles in the file
  std::size_t count_ = 0;
};

}  // namespace framesim::analysis
