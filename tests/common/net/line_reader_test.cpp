#include "common/net/line_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace tilestream {
namespace {

using Got = LineReader::Got;

// Every client's line end is one: "\n", "\r\n" or a lone "\r"; a "\r\n"
// split between two reads ends one line, not two.
TEST(LineReader, EachLineEndEndsOneLineEvenSplitAcrossReads) {
  LineReader r(100);
  std::string in = "a\nb\r\nc\r";
  std::string line;
  ASSERT_EQ(r.Next(in, &line), Got::kLine);
  EXPECT_EQ(line, "a");
  ASSERT_EQ(r.Next(in, &line), Got::kLine);
  EXPECT_EQ(line, "b");
  ASSERT_EQ(r.Next(in, &line), Got::kLine);
  EXPECT_EQ(line, "c");
  EXPECT_EQ(r.Next(in, &line), Got::kNone);
  in += "\nd";
  EXPECT_FALSE(r.HasLine(in)) << "the \\n of c's \\r\\n is no line of its own";
  EXPECT_TRUE(r.Unfinished(in));
  EXPECT_EQ(r.Next(in, &line), Got::kNone);
  in += "\n";
  ASSERT_EQ(r.Next(in, &line), Got::kLine);
  EXPECT_EQ(line, "d");
  EXPECT_FALSE(r.Unfinished(in));
}

// A line longer than the limit is an error, whether its end has come or
// not, so a peer cannot grow the buffer without one.
TEST(LineReader, ALineOverTheLimitIsAnError) {
  LineReader r(4);
  std::string line;
  std::string in = "12345";
  EXPECT_TRUE(r.Overlong(in));
  EXPECT_EQ(r.Next(in, &line), Got::kTooLong);
  std::string ended = "12345\n";
  EXPECT_EQ(r.Next(ended, &line), Got::kTooLong);
  std::string fits = "1234\n";
  EXPECT_FALSE(r.Overlong(fits));
  EXPECT_EQ(r.Next(fits, &line), Got::kLine);
}

}  // namespace
}  // namespace tilestream
