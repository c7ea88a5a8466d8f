// Fault tests of core/files: what a write does to what is already at the path (a symbolic link is written
// through, a device node, FIFO or socket is refused and left as it was), a multi-file write under a full disk
// (whole or nothing), and a read of a file whose size is not known beforehand (/dev/zero) stops at the limit.
// The oracle is the file system itself: lstat of the path after the call.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/files.hpp"

namespace {

namespace fs = std::filesystem;
using framesim::core::UserError;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("framesim_files_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  /// The names in `dir_`, sorted: to see that no temporary was left.
  std::string listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const auto& n : names) out += n + " ";
    return out;
  }
  /// The message of the UserError `write` throws, or "" if it throws none.
  template <typename F>
  static std::string refusal(F write) {
    try {
      write();
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(FilesTest, WritesThroughASymlinkAndKeepsTheLink) {
  const fs::path target = dir_ / "target.svg";
  const fs::path link = dir_ / "link.svg";
  { std::ofstream(target) << "old"; }
  fs::create_symlink("target.svg", link);  // relative, as `ln -s` makes it
  framesim::core::write_file_atomic(link, "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link))) << "the link was replaced by a file";
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(listing(), "link.svg target.svg ");
}

// A file this process read is an input: a write to it, by its own name or through a link, is refused and the file
// keeps its bytes (`budget HW NET --svg HW` replaced the hardware file with the SVG). A file never read is written.
TEST_F(FilesTest, AFileReadAsAnInputIsNeverWrittenOver) {
  const fs::path input = dir_ / "input.yaml";
  { std::ofstream(input) << "name: mine\n"; }
  fs::create_symlink("input.yaml", dir_ / "link.yaml");
  ASSERT_EQ(framesim::core::read_file(input), "name: mine\n");
  const std::string shown = input.lexically_normal().generic_string();
  EXPECT_EQ(refusal([&] { framesim::core::write_file_atomic(input, "<svg/>"); }),
            shown + ": cannot write: it is an input of this command (" + shown +
                "); framesim never writes over what it reads: give another path");
  EXPECT_NE(refusal([&] { framesim::core::write_file_atomic(dir_ / "link.yaml", "<svg/>"); }), "");
  EXPECT_NE(refusal([&] { framesim::core::write_files_atomic({{dir_ / "other.svg", "a"}, {input, "b"}}); }), "");
  EXPECT_EQ(read(input), "name: mine\n");
  EXPECT_EQ(listing(), "input.yaml link.yaml ") << "nothing else written, no temporary left";
  framesim::core::write_file_atomic(dir_ / "other.svg", "<svg/>");
  EXPECT_EQ(read(dir_ / "other.svg"), "<svg/>");
  // A folder holding an input (at any depth, links resolved) is named as such; one beside it is not.
  EXPECT_EQ(framesim::core::input_within(dir_), shown);
  EXPECT_EQ(framesim::core::input_within(dir_.parent_path()), shown);
  fs::create_directories(dir_ / "sub");
  EXPECT_EQ(framesim::core::input_within(dir_ / "sub"), "");
}

TEST_F(FilesTest, WritesTheTargetOfADanglingSymlink) {
  fs::create_symlink(dir_ / "made.txt", dir_ / "link.txt");
  framesim::core::write_file_atomic(dir_ / "link.txt", "made");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link.txt")));
  EXPECT_EQ(read(dir_ / "made.txt"), "made");
}

TEST_F(FilesTest, RefusesASymlinkLoop) {
  fs::create_symlink("b", dir_ / "a");
  fs::create_symlink("a", dir_ / "b");
  EXPECT_NE(refusal([&] { framesim::core::write_file_atomic(dir_ / "a", "x"); }).find("symbolic links"),
            std::string::npos);
  EXPECT_EQ(listing(), "a b ");
}

TEST_F(FilesTest, RefusesAFifoAndLeavesIt) {
  const fs::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string why = refusal([&] { framesim::core::write_file_atomic(fifo, "x"); });
  EXPECT_NE(why.find(fifo.string() + ": cannot write: it is a FIFO"), std::string::npos) << why;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(listing(), "out.fifo ");
}

TEST_F(FilesTest, RefusesASocketAndASymlinkToIt) {
  const fs::path sock = dir_ / "s.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof(addr.sun_path));
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  fs::create_symlink(sock, dir_ / "link");
  EXPECT_NE(refusal([&] { framesim::core::write_file_atomic(sock, "x"); }).find("it is a socket"), std::string::npos);
  const std::string via_link = refusal([&] { framesim::core::write_file_atomic(dir_ / "link", "x"); });
  EXPECT_NE(via_link.find("(a link to " + sock.string() + "): cannot write: it is a socket"), std::string::npos)
      << via_link;
  EXPECT_TRUE(fs::is_socket(fs::symlink_status(sock)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link")));
  ::close(fd);
}

TEST_F(FilesTest, RefusesACharacterDeviceAndLeavesIt) {
  // A device node of our own (the same numbers as /dev/null): the test never touches the system's /dev.
  const fs::path dev = dir_ / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs CAP_MKNOD";
  const std::string why = refusal([&] { framesim::core::write_file_atomic(dev, "x"); });
  EXPECT_NE(why.find("it is a character device"), std::string::npos) << why;
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  EXPECT_EQ(listing(), "null ");
}

TEST_F(FilesTest, DashIsTheStandardOutput) {
  // Standard output pointed at a file for the call: the content arrives there, nothing is created named "-".
  const fs::path captured = dir_ / "stdout.txt";
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(file, 0);
  ::dup2(file, STDOUT_FILENO);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  framesim::core::write_file_atomic("-", "to stdout\n");
  framesim::core::write_file_atomic("/dev/stdout", "again\n");
  fs::current_path(cwd);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(file);
  EXPECT_EQ(read(captured), "to stdout\nagain\n");
  EXPECT_EQ(listing(), "stdout.txt ");
}

TEST_F(FilesTest, AReplacedFileKeepsItsPermissions) {
  const fs::path p = dir_ / "script.sh";
  { std::ofstream(p) << "old"; }
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read);
  framesim::core::write_file_atomic(p, "new");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_all | fs::perms::group_read);
}

/// A full disk, as the file-size limit makes it: a write past the limit fails with EFBIG (SIGXFSZ ignored).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_signal_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limited = previous_;
    limited.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }

 private:
  rlimit previous_{};
  void (*previous_signal_)(int) = nullptr;
};

TEST_F(FilesTest, AFolderOfFilesIsWrittenWholeOrNotAtAll) {
  const fs::path out = dir_ / "compare";
  const std::string big(4096, 'x');
  {
    const FileSizeLimit limit(1000);
    const std::string why = refusal([&] {
      framesim::core::write_files_atomic(out, {{"compare.json", "{}\n"}, {"compare.txt", "ok\n"}, {"report.html", big}},
                                         "-o");
    });
    EXPECT_NE(why.find("report.html: cannot write: File too large"), std::string::npos) << why;
  }
  EXPECT_FALSE(fs::exists(out)) << "the folder framesim created is removed again";
  // Into a folder that exists: its files stay as they were, no temporary is left.
  fs::create_directories(out);
  { std::ofstream(out / "compare.json") << "before"; }
  {
    const FileSizeLimit limit(1000);
    refusal([&] { framesim::core::write_files_atomic(out, {{"compare.json", "{}\n"}, {"report.html", big}}, "-o"); });
  }
  EXPECT_EQ(read(out / "compare.json"), "before");
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  framesim::core::write_files_atomic(out, {{"compare.json", "{}\n"}, {"report.html", big}}, "-o");
  EXPECT_EQ(read(out / "report.html"), big);
}

TEST_F(FilesTest, AFullDiskNamesThePathAndTheReason) {
  const FileSizeLimit limit(10);
  const std::string why = refusal([&] { framesim::core::write_file_atomic(dir_ / "a.svg", std::string(100, 'x')); });
  EXPECT_EQ(why, (dir_ / "a.svg").string() + ": cannot write: File too large");
  EXPECT_EQ(listing(), "");
}

TEST_F(FilesTest, ReadingDevZeroStopsAtTheLimit) {
  // /dev/zero never ends and has no size: the read stops after max_bytes (here 1 MiB) with a message.
  const std::string why = refusal([] { framesim::core::read_file("/dev/zero", 1u << 20); });
  EXPECT_EQ(why, "/dev/zero: longer than 1 MiB (reading stopped there); framesim reads files of at most 1 MiB");
}

TEST_F(FilesTest, AFileIsReadWholeAtEverySizeAroundThePieces) {
  // A regular file is read in one go sized by its length, then in 4 KiB pieces past it; the oracle is what the
  // standard library's stream reads back, for sizes at and around those boundaries (and a file at the limit and one
  // byte over it).
  for (const std::size_t size : {0u, 1u, 4095u, 4096u, 4097u, 8192u, 65537u, 1u << 20}) {
    std::string text(size, '\0');
    for (std::size_t i = 0; i < size; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 13) % 26);
    const fs::path file = dir_ / ("f" + std::to_string(size));
    { std::ofstream(file, std::ios::binary) << text; }
    EXPECT_EQ(framesim::core::read_file(file, 1u << 20), read(file)) << size;
  }
  { std::ofstream(dir_ / "over", std::ios::binary) << std::string((1u << 20) + 1, 'x'); }
  EXPECT_NE(refusal([&] { framesim::core::read_file(dir_ / "over", 1u << 20); }), "");
}

TEST_F(FilesTest, AFifoNobodyWritesToReadsAsEmptyInsteadOfHanging) {
  // Opening a FIFO for reading blocks until a writer comes; framesim opens it without blocking, so a FIFO given by
  // mistake reads as an empty file (a message follows) instead of a hang.
  const fs::path fifo = dir_ / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(framesim::core::read_file(fifo), "");
}

TEST_F(FilesTest, CreateFoldersNamesTheFileInTheWay) {
  { std::ofstream(dir_ / "file") << "x"; }
  const std::string why = refusal([&] { framesim::core::create_folders(dir_ / "file" / "sub"); });
  EXPECT_NE(why.find((dir_ / "file" / "sub").string() + ": cannot create the folder: "), std::string::npos) << why;
}

}  // namespace

// SHA-256 of the provenance, framesim's own: the four examples of NIST's "Example Algorithms" for SHA-256 (FIPS
// 180-4's one-block "abc", two-block 448-bit message, the empty message and a million "a"s), then lengths around
// every padding boundary (55/56 bytes: the length still fits in the last block or not; 63/64/65: whole blocks)
// against coreutils' sha256sum, an implementation that shares nothing with framesim's.
TEST(Sha256, NistExamples) {
  using framesim::core::sha256_hex;
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, AgreesWithSha256sumAroundEveryPaddingBoundary) {
  const fs::path dir = fs::temp_directory_path() / ("framesim-sha-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  unsigned state = 12345;  // a fixed sequence of bytes, every value 0-255 included
  for (std::size_t length : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 65537}) {
    std::string bytes(length, '\0');
    for (char& c : bytes) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 16);
    const fs::path file = dir / "bytes";
    std::ofstream(file, std::ios::binary) << bytes;
    const fs::path out = dir / "sum";
    ASSERT_EQ(std::system(("sha256sum '" + file.string() + "' > '" + out.string() + "'").c_str()), 0);
    std::ifstream in(out);
    std::string expected;
    in >> expected;
    EXPECT_EQ(framesim::core::sha256_hex(bytes), expected) << length << " bytes";
  }
  fs::remove_all(dir);
}
