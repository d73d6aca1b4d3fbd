#include "common/control/library_presence.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

WallConfig TwoServers() {
  WallConfig c;
  c.servers = {{"srv1", "", {}}, {"srv2", "", {}}};
  return c;
}

Library Listed(std::initializer_list<const char*> names) {
  Library l;
  for (const char* n : names) l.movies.push_back({n, std::nullopt, 0, ""});
  return l;
}

TEST(LibraryPresence, AMovieIsPresentOnlyWhenEveryServersLastReportNamesIt) {
  LibraryPresence p(TwoServers());
  EXPECT_NE(p.Missing("a").find("srv1 has not said"), std::string::npos) << p.Missing("a");
  p.Report(0, "a\nb\n");
  EXPECT_NE(p.Missing("a").find("srv2 has not said"), std::string::npos);
  p.Report(1, "a\nc");
  EXPECT_EQ(p.Missing("a"), "");
  EXPECT_NE(p.Missing("b").find("not on server srv2"), std::string::npos) << p.Missing("b");
  EXPECT_NE(p.Missing("c").find("not on server srv1"), std::string::npos);
  p.Report(1, "b\n");  // replaces the one before: a gone from srv2, b there now
  EXPECT_NE(p.Missing("a").find("srv2"), std::string::npos);
  EXPECT_EQ(p.Missing("b"), "");
}

TEST(LibraryPresence, MarksTheListingAndKeepsAProblemItAlreadyHad) {
  LibraryPresence p(TwoServers());
  p.Report(0, "a\nb\nwide\n");
  p.Report(1, "a\n");
  Library l = Listed({"a", "b", "wide"});
  l.movies[2].problem = "cut for 4x4, the wall is 4x2";
  p.Apply(&l);
  EXPECT_EQ(l.movies[0].problem, "");
  EXPECT_NE(l.movies[1].problem.find("srv2"), std::string::npos);
  EXPECT_EQ(l.movies[2].problem, "cut for 4x4, the wall is 4x2");
  EXPECT_EQ(PresentMovies(l), "a\n");
}

TEST(LibraryPresence, OneServerIsTheCoordinatorsOwnLookAndReportsAreUntrusted) {
  LibraryPresence one{WallConfig{}};
  EXPECT_EQ(one.Missing("anything"), "") << "one server: nothing to ask";
  LibraryPresence p(TwoServers());
  p.Report(7, "a\n");  // no such server
  const std::string names = "../etc\n.hidden\na\n\n" + std::string(200, 'x') + "\n";
  p.Report(0, names);
  p.Report(1, names);
  EXPECT_EQ(p.Missing("a"), "");
  EXPECT_NE(p.Missing("../etc"), "") << "not a movie's name: dropped";
  EXPECT_NE(p.Missing(".hidden"), "");
  EXPECT_NE(p.Missing(std::string(200, 'x')), "");
}

}  // namespace
}  // namespace tilestream
