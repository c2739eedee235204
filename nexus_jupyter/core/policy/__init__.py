"""core/policy"""
